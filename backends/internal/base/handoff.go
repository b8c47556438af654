package base

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Handoff is one claim call's part in lib.lua's hand-off, which lets an
// enqueue lease due jobs straight to a blocked claimer, so that the
// claimer's BZPOPMIN returns the jobs, one trip after the enqueue as the
// floor's BLMOVE does, instead of a wake and then a claim call. A claim
// script that takes it ends the registration Leave (handoff_leave: it
// returns what an enqueue handed to it meanwhile) and, when it finds
// nothing, registers Join until Until (handoff_join). Empty strings: none.
type Handoff struct{ Leave, Join, Until string }

// Args is h as a claim script's last three ARGV.
func (h Handoff) Args() []string { return []string{h.Leave, h.Join, h.Until} }

// How long a claimer's registration and a handed job's provisional lease
// last, in real time (lib.lua's hand-off). A process killed while
// registered can no longer leave: it is handed jobs until its
// registration ends, and those come back, without spending an attempt,
// once their provisional lease ends and a Recover runs. A live claimer
// renews its registration with each claim call (its block is cut to
// registrationHold) and keeps a handed job by its first Extend, Complete
// or Fail, which a worker sends before half the provisional lease is over
// (the engine's runHandler); a lease asked for is never made longer.
// Bounds: the dead registration's share of the jobs it is handed is
// about registrationHold times the rate a claimer receives, and those
// wait up to handoffLease plus the recovery interval.
const (
	registrationHold = time.Second
	handoffLease     = 2 * time.Second
)

// waiter is the registration member of a claimer (lib.lua's
// handoff_waiters parses it): its token base names its inbox and the
// tokens of the jobs it is handed, lease the handed jobs' provisional
// lease; the worker id comes last, since it may hold '|'.
func waiter(tokenBase string, max int, lease time.Duration, worker string) string {
	return tokenBase + "|" + strconv.Itoa(max) + "|" + strconv.FormatInt(lease.Milliseconds(), 10) + "|" + worker
}

// registration is a new registration of a claimer for req made at now on
// the store's clock: its member (waiter, with a fresh token base and the
// provisional lease) and until when it holds: the rest of the wait, but no
// more than registrationHold (in real time).
func (c *Core) registration(req jobstore.ClaimRequest, now time.Time) (member, until string) {
	lease := min(req.Lease, clock.SimDuration(c.Opts.Clock, handoffLease))
	hold := min(req.Wait, clock.SimDuration(c.Opts.Clock, registrationHold))
	return waiter(c.TokenBase(), req.Max, lease, req.WorkerID), Ms(now.Add(hold))
}

// holdBlock cuts a block on the hand-off's inbox to the registration's
// life, so that a live claimer renews it (its next claim call) before it
// ends.
func holdBlock(block time.Duration) time.Duration { return min(block, registrationHold) }

// returnedItem is what an inbox holds once Recover returned its jobs
// (lib.lua's RETURNED, return_handed): no job.
const returnedItem = "returned"

// DecodeClaimReply reads a ZSET claim script's reply {claimed jobs
// (DecodeClaimed), head ms or ”, [handed item]}: the jobs, the head and
// whether the head was read. A reply with a handed item (handoff_leave
// found one) holds no other jobs.
func DecodeClaimReply(v any, worker string, now, deadline time.Time) ([]jobstore.Claimed, any, error) {
	reply, _ := v.([]any)
	if len(reply) < 2 {
		return nil, nil, fmt.Errorf("claim: unexpected reply %v", v)
	}
	if len(reply) > 2 {
		if item, ok := reply[2].(string); ok {
			got, err := decodeHandoff(item, worker)
			return got, "", err
		}
	}
	got, err := DecodeClaimed(reply[0], worker, now, deadline)
	return got, reply[1], err
}

// decodeHandoff reads an item lib.lua's handoff_give wrote: "<started
// ms>|<deadline ms>|", then four handoff_fields a job ("<len>:<bytes>",
// '-' for none): id, token, payload, retries|name. The jobs are the ones
// DecodeClaimed makes of a claim reply, started and leased at the
// enqueuer's now.
func decodeHandoff(item, worker string) ([]jobstore.Claimed, error) {
	bad := func(why string) error { return fmt.Errorf("handed jobs %.40q: %s", item, why) }
	started, rest, ok1 := strings.Cut(item, "|")
	deadline, rest, ok2 := strings.Cut(rest, "|")
	s, err1 := strconv.ParseInt(started, 10, 64)
	d, err2 := strconv.ParseInt(deadline, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return nil, bad("no started|deadline| head")
	}
	var fields []any
	for rest != "" {
		if rest[0] == '-' {
			fields, rest = append(fields, nil), rest[1:]
			continue
		}
		n, tail, ok := strings.Cut(rest, ":")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || size < 0 || size > len(tail) {
			return nil, bad("a field's length is missing or too long")
		}
		fields, rest = append(fields, tail[:size]), tail[size:]
	}
	if len(fields) == 0 {
		return nil, bad("no jobs")
	}
	return DecodeClaimed(fields, worker, time.UnixMilli(s), time.UnixMilli(d))
}

// leave ends registration member when the claimer stops waiting with no
// claim call after its block (the wait or ctx ended), on a context of its
// own: a job handed to it just before would otherwise wait for its lease
// to expire. It returns what it was handed.
func (c *Core) leave(ctx context.Context, member string) ([]jobstore.Claimed, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), alarmTimeout)
	defer cancel()
	v, err := c.Run(ctx, ScriptLeave, []string{c.Keys.Waiters()}, []string{member, Ms(c.Now())})
	if err != nil {
		return nil, fmt.Errorf("leave the waiters: %w", err)
	}
	item, ok := v.(string)
	if !ok {
		return nil, nil
	}
	_, worker := cutWaiter(member)
	return decodeHandoff(item, worker)
}

// cutWaiter returns a registration member's token base and worker (waiter
// lays it out).
func cutWaiter(member string) (tokenBase, worker string) {
	tokenBase, rest, _ := strings.Cut(member, "|")
	_, rest, _ = strings.Cut(rest, "|")   // max
	_, worker, _ = strings.Cut(rest, "|") // lease ms
	return tokenBase, worker
}

// wakeMarker sets the wake-up marker (lib.lua's wake) from Go: the alarm's
// wake, and one a claimer took and passes on.
func (c *Core) wakeMarker(ctx context.Context, marker string) {
	_, _ = c.C.Do(ctx, rclient.Cmd("ZADD", marker, "0", "w"))
}

// blockHanded blocks on the inbox of registration member (empty: none)
// and the marker for up to block, and decides what follows: done with the
// jobs the inbox delivered; done when the block failed or ctx ended
// (blockFailed); done, after leaving, when the wait is over (it timed out
// with end reached, or ctx's deadline is too close for another call: a
// wake it took then is passed on); else not done, and the caller's next
// claim call ends the registration.
func (c *Core) blockHanded(ctx context.Context, member, marker string, block time.Duration, end time.Time) ([]jobstore.Claimed, bool, error) {
	tokenBase, worker := cutWaiter(member)
	keys := []string{marker}
	if member != "" {
		keys = []string{c.Keys.Inbox(tokenBase), marker}
	}
	secs := strconv.FormatFloat(max(block, minBlock).Seconds(), 'f', 3, 64)
	v, err := c.C.DoBlocking(ctx, rclient.Command{Head: []string{"BZPOPMIN"}, Keys: keys, Args: []string{secs}})
	r, _ := v.([]any)
	if err == nil && member != "" && len(r) >= 2 && r[0] == keys[0] {
		item, _ := r[1].(string)
		if item == returnedItem {
			// Recover took the jobs back: this claimer came too late.
			return nil, true, nil
		}
		got, err := decodeHandoff(item, worker)
		return got, true, err
	}
	if err != nil || rclient.Ended(ctx) {
		got, err := c.blockFailed(ctx, member, err)
		return got, true, err
	}
	woke := len(r) >= 2
	dl, ok := ctx.Deadline()
	if ok && time.Until(dl) <= blockMargin || !woke && time.Until(end) <= minBlock {
		if woke {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), alarmTimeout)
			c.wakeMarker(wctx, marker)
			cancel()
		}
		if member == "" {
			return nil, true, nil
		}
		got, err := c.leave(ctx, member)
		return got, true, err
	}
	return nil, false, nil
}

// callFailed ends a claim call that failed with err as ctx ended: the call
// may have run in Redis with its reply lost (the client gave up at its
// deadline), having taken what an enqueue handed to registration h.Leave
// (lib.lua's handoff_leave keeps a copy, so a second leave gets it again)
// and made registration h.Join, which enqueues would hand jobs to until it
// ends. It leaves both, returning what they were handed, without err (as
// blockFailed). Before it, such a job waited for its provisional lease
// and a Recover: TestHandoffDeadlineRace found some on a loaded machine.
func (c *Core) callFailed(ctx context.Context, h Handoff, err error) ([]jobstore.Claimed, error) {
	got, err := c.blockFailed(ctx, h.Leave, err)
	if h.Join != "" && h.Join != h.Leave {
		more, lerr := c.leave(ctx, h.Join)
		got, err = append(got, more...), errors.Join(err, lerr)
	}
	return got, err
}

// blockFailed ends a hand-off wait that failed with err, in its block or
// in a claim call after it (err nil: the block returned after ctx ended; a
// go-redis read blocked in Redis sees a canceled context only when Redis
// answers). It leaves registration member (empty: none), returning what
// was handed to it, and err unless ctx ended (a wait that ends with its
// context returns nothing more, as PollClaim's does).
func (c *Core) blockFailed(ctx context.Context, member string, err error) ([]jobstore.Claimed, error) {
	var left []jobstore.Claimed
	var lerr error
	if member != "" {
		left, lerr = c.leave(ctx, member)
	}
	if rclient.Ended(ctx) {
		return left, lerr
	}
	return left, errors.Join(fmt.Errorf("wait for work: %w", err), lerr)
}
