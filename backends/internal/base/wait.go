package base

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// How a ZSET-based backend's Claim waits for work: the values of its option
// OptionWait.
const (
	OptionWait = "wait"
	// WaitBlock: block on a wake-up marker (BZPOPMIN) until work is due or
	// enqueued. The default.
	WaitBlock = "block"
	// WaitPoll: poll every Options.PollInterval, as the seeds' workers do.
	WaitPoll = "poll"
)

// WaitOption reads OptionWait from a backend's string options: absent or
// "block" gives true (block), "poll" false.
func WaitOption(backend string, extra map[string]string) (bool, error) {
	switch v := extra[OptionWait]; v {
	case "", WaitBlock:
		return true, nil
	case WaitPoll:
		return false, nil
	default:
		return false, fmt.Errorf("%w: backend %s: option %s %q: allowed are %q and %q", jobstore.ErrInvalid, backend, OptionWait, v, WaitBlock, WaitPoll)
	}
}

// minBlock is the shortest BZPOPMIN timeout sent: Redis takes seconds with
// millisecond resolution, and 0 would mean forever.
const minBlock = time.Millisecond

// BlockClaim calls try until it returns work, the wait runs out or ctx
// ends. Between tries it blocks on the wake-up marker (lib.lua's wake) for
// the rest of the wait, but no longer than until next, the queue head's
// RunAt that try reported (zero: the queue is empty). The store's clock
// decides what is due; the block is real time, so under a controlled clock
// it only bounds how soon try runs again.
//
// Hand-off (lib.lua's, see Handoff): each try that may be followed by a
// block registers the claimer as a waiter when it finds nothing (h.Join),
// and the next try ends that registration (h.Leave); the block is then on
// the claimer's inbox and the marker together, and returns the jobs an
// enqueue handed it. A registration holds for registrationHold at most, so
// the block is cut to that and the next try renews it (a claimer killed
// while registered stops being handed jobs that soon). A claimer whose
// wait ends after a block runs one more try without registering; one whose
// context ends leaves with ScriptLeave.
//
// A claim that took work and saw the queue left empty (NoteEmptied) lets
// the next waiting BlockClaim block first and try after: the try would find
// nothing, since every write that places a job due now, or ahead of an
// empty queue's head, sets the marker, and a marker set in between ends
// the block at once. That saves an empty claim script per job at a low
// rate, where each claimer otherwise tries, finds nothing, then blocks. It
// registers with a plain ZADD then: a due job placed before that was not
// handed, and its wake ends the block. Jobs handed over count as such a
// claim (the enqueue hands jobs only when nothing is due, and wakes for
// the rest): at a low rate that spares the claim call that would only
// register again (ci-cost.yaml: about one FCALL a job).
func (c *Core) BlockClaim(ctx context.Context, req jobstore.ClaimRequest, marker string, try func(Handoff) ([]jobstore.Claimed, time.Time, error)) ([]jobstore.Claimed, error) {
	end := time.Now().Add(c.Real(req.Wait))
	// A claim that does not wait must look.
	skip := c.emptied.Swap(false) && req.Wait > 0
	var h Handoff
	for {
		var got []jobstore.Claimed
		var next time.Time
		var err error
		h.Join, h.Until = "", ""
		if time.Until(end) > minBlock && ctx.Err() == nil {
			h.Join, h.Until = c.registration(req, c.Now())
		}
		if skip && h.Join != "" {
			_, err = c.C.Do(ctx, rclient.Cmd("ZADD", c.Keys.Waiters(), h.Until, h.Join))
		} else {
			got, next, err = try(h)
		}
		skip = false
		if err != nil && req.Wait > 0 && rclient.Ended(ctx) {
			left, err := c.callFailed(ctx, h, err)
			return append(got, left...), err
		}
		if err != nil || len(got) > 0 {
			return got, err
		}
		h.Leave = h.Join // registered: by the try, or by the ZADD
		block := time.Until(end)
		if dl, ok := ctx.Deadline(); ok {
			// Leave the reply time to arrive before the caller gives up.
			block = min(block, time.Until(dl)-blockMargin)
		}
		if !next.IsZero() {
			block = min(block, max(c.Real(next.Sub(c.Now())), minBlock))
		}
		if h.Leave != "" {
			block = holdBlock(block)
		}
		if block <= 0 || ctx.Err() != nil {
			if h.Leave != "" {
				return c.leave(ctx, h.Leave)
			}
			return nil, nil
		}
		if !next.IsZero() {
			// Redis times the block out on its hz tick, up to 1/hz late
			// when idle; the alarm wakes a claimer at next itself.
			c.WakeAt(next, func(ctx context.Context) { c.wakeMarker(ctx, marker) })
		}
		got, done, err := c.blockHanded(ctx, h.Leave, marker, block, end)
		if len(got) > 0 && err == nil {
			// An enqueue handed them over because nothing was due, and
			// queued the rest with a wake: the next claim blocks first.
			c.NoteEmptied()
		}
		if done {
			return got, err
		}
	}
}

// NoteEmptied records that a claim took work and read the queue's head
// as empty after its pop (see BlockClaim).
func (c *Core) NoteEmptied() { c.emptied.Store(true) }

// alarm is a store's one pending wake-up (see WakeAt).
type alarm struct {
	mu    sync.Mutex
	timer *time.Timer
	at    time.Time // zero: none pending
}

// alarmTimeout bounds the command an alarm sends.
const alarmTimeout = time.Second

// WakeAt runs fire, once and in a goroutine of its own, when the store's
// clock reaches at (at - now from now, in real time; see Real), so that a claim
// blocked until a delayed job's RunAt wakes at that instant rather than on
// Redis's timer tick, which times a blocked command out up to 1/hz late
// (100ms at the default hz 10). fire wakes the blocked claimers (a marker
// ZADD, or dual's promotion, whose XADD wakes a blocked read). A store keeps
// only its earliest pending alarm: a later one is dropped, since the
// claimer woken first finds the next RunAt and sets it again. A claimer
// woken early (at is on the store's clock, the timer in real time) finds
// nothing due and blocks again: the store's clock alone decides what is due.
func (c *Core) WakeAt(at time.Time, fire func(context.Context)) {
	d := at.Sub(c.Now())
	if d <= 0 || c.closed.Load() {
		return
	}
	a := &c.alarm
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.at.IsZero() && !at.Before(a.at) {
		return
	}
	if a.timer != nil {
		a.timer.Stop()
	}
	a.at = at
	a.timer = time.AfterFunc(c.Real(d), func() {
		a.mu.Lock()
		if a.at.Equal(at) {
			a.at = time.Time{}
		}
		a.mu.Unlock()
		if c.closed.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), alarmTimeout)
		defer cancel()
		fire(ctx)
	})
}

// stopAlarm cancels a pending alarm (Close).
func (c *Core) stopAlarm() {
	c.alarm.mu.Lock()
	defer c.alarm.mu.Unlock()
	if c.alarm.timer != nil {
		c.alarm.timer.Stop()
	}
	c.alarm.at = time.Time{}
}

// NextDue parses a head score that head_after_pop returned (” when empty).
func NextDue(v any) time.Time {
	s, _ := v.(string)
	if s == "" {
		return time.Time{}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(f))
}

// WaitClaim is Claim for a ZSET-based backend: it checks req, then runs try
// (one claim attempt at the store's now, leases ending at deadline) until
// it returns work or req.Wait runs out, blocking on the wake-up marker
// between attempts when marker names one (try then takes part in the
// hand-off: h, see BlockClaim), polling otherwise (h is zero).
func (c *Core) WaitClaim(ctx context.Context, req jobstore.ClaimRequest, marker []string,
	try func(now, deadline time.Time, h Handoff) ([]jobstore.Claimed, time.Time, error)) ([]jobstore.Claimed, error) {
	if err := ValidateClaim(req); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	attempt := func(h Handoff) ([]jobstore.Claimed, time.Time, error) {
		now := c.Now()
		return try(now, now.Add(req.Lease), h)
	}
	if len(marker) > 0 {
		return c.BlockClaim(ctx, req, marker[0], attempt)
	}
	return c.PollClaim(ctx, req.Wait, func() ([]jobstore.Claimed, error) {
		got, _, err := attempt(Handoff{})
		return got, err
	})
}
