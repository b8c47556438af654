package zset

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptSeed004Claim = base.NewScript("seed004_claim")
)

// Seed004Batch is seed 004's pop limit: its Lua script takes at most 20
// due ids per call.
const Seed004Batch = 20

// Seed004 is a SEED VARIANT, not a job store to use: seed 004's scheduler
// (shared/seeds/004_02345aa355d89da7.txt):
//   - Claim pops up to 20 due ids with the seed's script, ZRANGEBYSCORE then
//     ZREM (lines 134-147; seed004_claim.lua), before any work, with no
//     lease in the active index. Then, per job and in a command of its own
//     after the pop (lines 209-214), the processing marker: a hash
//     processing:<id> with the worker and the claim time (here under the
//     queue's hash tag, ae:{queue}:processing:<id>).
//   - Complete and Fail check no lease (unfenced_*.lua), then delete the
//     marker in another command (lines 222-224, 239, 246).
//   - Stats counts jobs in progress as the seed's metrics do (line 332):
//     KEYS processing:*, which walks every key in the database.
//   - Recover has nothing to take back (the seed has no reclaim loop),
//     Extend nothing to renew.
//
// So a worker that crashes between the pop and its Complete loses the job
// (the flaw the seed warns of), one that crashes between the pop and the
// marker loses it unseen by the metrics, and each metrics call costs Redis
// time in proportion to the whole keyspace. It polls every
// Options.PollInterval (the seed's worker polls every 500ms: set
// store.poll_interval to 500ms to match). Departures: the record is
// marked InProgress in the pop (our ledger's read-back needs it; the seed's
// job hash has no status), and retries keep Options.Backoff (the seed's
// 2^attempt s is base 1s).
type Seed004 struct{ Unfenced }

var _ jobstore.BatchCompleter = (*Seed004)(nil)

// Capabilities: a seed variant without fencing, lease recovery or
// store-clock leases (it has no leases).
func (s *Seed004) Capabilities() jobstore.Capabilities {
	return withoutCore(jobstore.Capabilities{jobstore.CapNativeDelay: true, jobstore.CapStrictFIFO: true,
		jobstore.CapExactStats: true, jobstore.CapBatchComplete: true}.WithCore(), jobstore.CapFencing, jobstore.CapLeaseRecovery)
}

// marker is the seed's processing:<id> key.
func (s *Seed004) marker(id string) string { return s.Keys.ProcessingOf(id) }

// Claim pops up to min(req.Max, 20) due ids, then writes each one's
// processing marker, polling while req.Wait allows.
func (s *Seed004) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	got, err := s.PollScriptClaim(ctx, req, func(now, deadline time.Time) (any, error) {
		v, err := s.Run(ctx, scriptSeed004Claim, []string{s.queue},
			[]string{base.Ms(now), strconv.Itoa(min(req.Max, Seed004Batch)), base.Ms(deadline), s.TokenBase(), req.WorkerID})
		if err != nil {
			return nil, fmt.Errorf("zset seed004: %w", err)
		}
		return v, nil
	})
	for _, c := range got {
		meta := `{"worker":"` + req.WorkerID + `","claimedAt":"` + c.Job.StartedAt.UTC().Format(time.RFC3339Nano) + `"}`
		if _, merr := s.C.Do(ctx, rclient.Cmd("HSET", s.marker(c.Job.ID), "meta", meta)); merr != nil {
			return got, errors.Join(err, fmt.Errorf("zset seed004: processing marker of %s: %w", c.Job.ID, merr))
		}
	}
	return got, err
}

// Extend renews nothing: the seed has no lease and no heartbeat.
func (s *Seed004) Extend(_ context.Context, l jobstore.Lease, _ time.Duration) (jobstore.Lease, error) {
	return l, base.ValidateLease(l)
}

// Complete marks the job Completed without checking the lease, then
// deletes its marker.
func (s *Seed004) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	if err := s.Unfenced.Complete(ctx, l, result); err != nil {
		return err
	}
	return s.dropMarker(ctx, l.JobID)
}

// CompleteMany completes each lease as Complete does.
func (s *Seed004) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return base.CompleteEach(ctx, cs, s.Complete)
}

// Fail retries or dead-letters without checking the lease, then deletes
// the marker.
func (s *Seed004) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	r, err := s.Unfenced.Fail(ctx, l, reason)
	if err != nil {
		return r, err
	}
	return r, s.dropMarker(ctx, l.JobID)
}

func (s *Seed004) dropMarker(ctx context.Context, id string) error {
	if _, err := s.C.Do(ctx, rclient.Cmd("DEL", s.marker(id))); err != nil {
		return fmt.Errorf("zset seed004: delete processing marker of %s: %w", id, err)
	}
	return nil
}

// Stats counts the queue, and as InProgress the seed's processing markers,
// found the seed's way: KEYS processing:* (O(keys in the database)).
func (s *Seed004) Stats(ctx context.Context) (jobstore.Stats, error) {
	st, err := s.Store.Stats(ctx)
	if err != nil {
		return st, err
	}
	v, err := s.C.Do(ctx, rclient.Cmd("KEYS", s.marker("*")))
	if err != nil {
		return st, fmt.Errorf("zset seed004: stats: %w", err)
	}
	st.InProgress = int64(len(base.Strings(v)))
	return st, nil
}

// Recover finds nothing: a popped job is in no index the seed reclaims from.
func (s *Seed004) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	if err := jobstore.CheckMax("Recover", max); err != nil {
		return jobstore.RecoverResult{}, err
	}
	if err := s.Check(); err != nil {
		return jobstore.RecoverResult{}, err
	}
	// No lease to take back (the seed's flaw), but finished records still
	// expire (base's SweepExpired).
	return jobstore.RecoverResult{}, s.SweepExpired(ctx, s.Now(), max)
}
