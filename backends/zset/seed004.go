package zset

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Seed004Batch is seed 004's pop limit: its Lua script takes at most 20
// due ids per call.
const Seed004Batch = 20

// Seed004 is a SEED VARIANT, not a job store to use: seed 004's scheduler.
// Claim pops up to 20 due ids with ZRANGEBYSCORE + ZREM (seed004_claim.lua)
// and marks each record as processing, with no lease in the active index;
// it polls every Options.PollInterval (the seed's worker polls every 500ms:
// set store.poll_interval to 500ms to match). Recover has nothing to take
// back (the seed has no reclaim loop), Extend nothing to renew, and
// Complete and Fail check no lease (unfenced_*.lua). So a worker that
// crashes between the pop and its Complete loses the job: the flaw the seed
// warns of. Retries keep Options.Backoff (the seed's 2^attempt s is base
// 1s); everything else is the corrected zset store's.
type Seed004 struct{ Unfenced }

var _ jobstore.BatchCompleter = (*Seed004)(nil)

// Capabilities: a seed variant without fencing, lease recovery or
// store-clock leases (it has no leases); Stats counts the processing
// markers as InProgress.
func (s *Seed004) Capabilities() jobstore.Capabilities {
	return withoutCore(jobstore.Capabilities{jobstore.CapNativeDelay: true, jobstore.CapStrictFIFO: true,
		jobstore.CapExactStats: true, jobstore.CapBatchComplete: true}.WithCore(), jobstore.CapFencing, jobstore.CapLeaseRecovery)
}

// Claim pops up to min(req.Max, 20) due ids, polling while req.Wait allows.
func (s *Seed004) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.PollScriptClaim(ctx, req, func(now, deadline time.Time) (any, error) {
		v, err := s.Run(ctx, "seed004_claim", []string{s.queue, s.Keys.Of("processing")},
			[]string{base.Ms(now), strconv.Itoa(min(req.Max, Seed004Batch)), base.Ms(deadline), s.TokenBase(), req.WorkerID})
		if err != nil {
			return nil, fmt.Errorf("zset seed004: %w", err)
		}
		return v, nil
	})
}

// Extend renews nothing: the seed has no lease and no heartbeat.
func (s *Seed004) Extend(_ context.Context, l jobstore.Lease, _ time.Duration) (jobstore.Lease, error) {
	return l, base.ValidateLease(l)
}

// Stats counts the queue, and as InProgress the seed's processing markers.
func (s *Seed004) Stats(ctx context.Context) (jobstore.Stats, error) {
	st, err := s.Store.Stats(ctx)
	if err != nil {
		return st, err
	}
	v, err := s.C.Do(ctx, rclient.Cmd("ZCARD", s.Keys.Of("processing")))
	if err != nil {
		return st, fmt.Errorf("zset seed004: stats: %w", err)
	}
	st.InProgress = base.Int(v)
	return st, nil
}

// Recover finds nothing: a popped job is in no index the seed reclaims from.
func (s *Seed004) Recover(_ context.Context, max int) (jobstore.RecoverResult, error) {
	if max <= 0 || max > base.MaxClaim {
		return jobstore.RecoverResult{}, fmt.Errorf("%w: Recover max %d: allowed is 1 to %d", jobstore.ErrInvalid, max, base.MaxClaim)
	}
	return jobstore.RecoverResult{}, s.Check()
}
