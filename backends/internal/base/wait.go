package base

import (
	"context"
	"fmt"
	"strconv"
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
func (c *Core) BlockClaim(ctx context.Context, wait time.Duration, marker string, try func() ([]jobstore.Claimed, time.Time, error)) ([]jobstore.Claimed, error) {
	end := time.Now().Add(wait)
	for {
		got, next, err := try()
		if err != nil || len(got) > 0 {
			return got, err
		}
		block := time.Until(end)
		if dl, ok := ctx.Deadline(); ok {
			// Leave the reply time to arrive before the caller gives up.
			block = min(block, time.Until(dl)-50*time.Millisecond)
		}
		if !next.IsZero() {
			block = min(block, max(next.Sub(c.Now()), minBlock))
		}
		if block <= 0 || ctx.Err() != nil {
			return nil, nil
		}
		secs := strconv.FormatFloat(max(block, minBlock).Seconds(), 'f', 3, 64)
		if _, err := c.C.DoBlocking(ctx, rclient.Cmd("BZPOPMIN", marker, secs)); err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, fmt.Errorf("wait for work: %w", err)
		}
	}
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
// between attempts when marker names one, polling otherwise.
func (c *Core) WaitClaim(ctx context.Context, req jobstore.ClaimRequest, marker []string,
	try func(now, deadline time.Time) ([]jobstore.Claimed, time.Time, error)) ([]jobstore.Claimed, error) {
	if err := ValidateClaim(req); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	attempt := func() ([]jobstore.Claimed, time.Time, error) {
		now := c.Now()
		return try(now, now.Add(req.Lease))
	}
	if len(marker) > 0 {
		return c.BlockClaim(ctx, req.Wait, marker[0], attempt)
	}
	return c.PollClaim(ctx, req.Wait, func() ([]jobstore.Claimed, error) {
		got, _, err := attempt()
		return got, err
	})
}
