// Package shard makes one logical queue of M complete job stores (shards),
// each with its own hash tag, so a queue spreads over the masters of a
// Redis Cluster instead of living in one slot on one Redis thread. Any job
// store (and the floor) can be sharded: the registry builds M stores of it,
// one per shard queue, and wraps them in a Store.
//
// What sharding keeps and what it breaks:
//
//   - A job lives in one shard, chosen by its id (FNV-1a), so Get, Cancel,
//     Extend, Complete, Fail and duplicate-id checks go to that shard alone.
//   - Enqueue of a batch splits it by shard: each shard's part is atomic, the
//     batch is not (no jobstore.CapAtomicBulk).
//   - A Claim takes the oldest due jobs of each shard it visits, from a
//     rotating first shard until it has Max: not the oldest of the queue (no
//     jobstore.CapQueueOrder, no jobstore.CapStrictFIFO across shards; both
//     hold within a shard). An idle queue costs a sweep of M calls.
//   - A waiting Claim first tries every shard without waiting (starting at a
//     shard that rotates from call to call, so claimers spread), then blocks
//     on one shard's wake-up (or polls it, as the backend does) for a slice
//     of its wait, and repeats until the wait is over: it never spins, and a
//     job landing on a shard nobody is blocked on waits at most one slice.
//   - Recover and Promote visit every shard; Stats adds them up.
//
// Shard queue names are <queue>.s<i>-<k>, with k the first number that puts
// the name's hash slot into the i-th of M equal slot ranges, so the shards
// of a queue fall on distinct masters of a cluster whose masters own equal
// ranges in order (a spawned cluster does).
package shard

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

// DefaultWaitSlice is how long (on the wall clock) a waiting Claim blocks
// on one shard before it looks at the others again.
const DefaultWaitSlice = 100 * time.Millisecond

// MaxShards bounds M.
const MaxShards = 64

// Options configure a sharded Store.
type Options struct {
	// Shards is M, 2 to MaxShards.
	Shards int
	// WaitSlice: see DefaultWaitSlice; zero means the default.
	WaitSlice time.Duration
	// Clock measures a waiting Claim's wait (the shards' clock). Default clock.Real{}.
	Clock clock.Clock
}

// Store is M shard stores seen as one jobstore.Store.
type Store struct {
	shards []jobstore.Store
	slice  time.Duration
	clk    clock.Clock
	next   atomic.Uint64 // rotates the first shard of Claim, Recover and Promote
}

// MoverStore is a Store whose shards are jobstore.Movers: Promote visits
// them all.
type MoverStore struct{ *Store }

// New builds the shard stores with build(ctx, i, queue) for i in 0..M-1 and
// returns them as one store: a *MoverStore when the shards are Movers.
func New(ctx context.Context, queue string, o Options, build func(ctx context.Context, i int, queue string) (jobstore.Store, error)) (jobstore.Store, error) {
	if o.Shards < 2 || o.Shards > MaxShards {
		return nil, fmt.Errorf("%w: shards %d: allowed is 2 to %d", jobstore.ErrInvalid, o.Shards, MaxShards)
	}
	if o.WaitSlice <= 0 {
		o.WaitSlice = DefaultWaitSlice
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	s := &Store{slice: o.WaitSlice, clk: o.Clock}
	for i := range o.Shards {
		st, err := build(ctx, i, QueueName(queue, i, o.Shards))
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("shard %d of %d: %w", i, o.Shards, err)
		}
		s.shards = append(s.shards, st)
	}
	if _, ok := s.shards[0].(jobstore.Mover); ok {
		return &MoverStore{s}, nil
	}
	return s, nil
}

// QueueName is shard i's queue of M: <queue>.s<i>-<k>, k chosen so the
// name's hash slot lies in the i-th of M equal slot ranges.
func QueueName(queue string, i, m int) string {
	lo, hi := i*slots/m, (i+1)*slots/m
	for k := 0; ; k++ {
		name := fmt.Sprintf("%s.s%d-%d", queue, i, k)
		if sl := int(crc16([]byte(name)) % slots); sl >= lo && sl < hi {
			return name
		}
	}
}

// Shards returns the shard stores, in order.
func (s *Store) Shards() []jobstore.Store { return s.shards }

func (s *Store) of(id string) jobstore.Store { return s.shards[s.index(id)] }

// index is the shard of a job id: FNV-1a, inline so that routing a call
// allocates nothing.
func (s *Store) index(id string) int {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int(h % uint32(len(s.shards)))
}

// start is the first shard a rotating visit takes.
func (s *Store) start() int { return int(s.next.Add(1) % uint64(len(s.shards))) }

// Enqueue stores each shard's part of jobs atomically; the batch as a
// whole is not atomic: parts of shards before a failing one stay stored.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if len(jobs) == 1 {
		return s.of(jobs[0].ID).Enqueue(ctx, jobs...)
	}
	parts := make([][]jobstore.NewJob, len(s.shards))
	for _, j := range jobs {
		i := s.index(j.ID)
		parts[i] = append(parts[i], j)
	}
	for i, p := range parts {
		if len(p) == 0 {
			continue
		}
		if err := s.shards[i].Enqueue(ctx, p...); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return nil
}

// Claim takes up to req.Max due jobs, visiting the shards from a rotating
// first one until it has Max; see the package doc for how it waits. The
// wait is timed on the wall clock, as the backends time theirs
// (clock.RealDuration: a simulated clock's wait lasts its real length).
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := base.ValidateClaim(req); err != nil {
		return nil, err
	}
	end := time.Now().Add(clock.RealDuration(s.clk, req.Wait))
	first := s.start()
	for {
		got, err := s.sweep(ctx, req, first)
		if err != nil || len(got) > 0 {
			return got, err
		}
		left := time.Until(end)
		if left < time.Millisecond || ctx.Err() != nil {
			return nil, nil
		}
		wait := req
		wait.Wait = s.onClock(min(s.slice, left))
		got, err = s.shards[first].Claim(ctx, wait)
		if err != nil || len(got) > 0 {
			return got, err
		}
		first = (first + 1) % len(s.shards)
	}
}

// onClock is how long a wall-clock duration d lasts on the store's clock
// (the inverse of clock.RealDuration).
func (s *Store) onClock(d time.Duration) time.Duration {
	return time.Duration(float64(d) * float64(time.Second) / float64(clock.RealDuration(s.clk, time.Second)))
}

// sweep claims without waiting from every shard, starting at first, until
// it holds req.Max jobs. An error after some jobs were claimed returns the
// jobs (their leases are live; the error shows again on the next call).
func (s *Store) sweep(ctx context.Context, req jobstore.ClaimRequest, first int) ([]jobstore.Claimed, error) {
	var out []jobstore.Claimed
	now := req
	now.Wait = 0
	for k := range s.shards {
		now.Max = req.Max - len(out)
		if now.Max <= 0 {
			break
		}
		got, err := s.shards[(first+k)%len(s.shards)].Claim(ctx, now)
		out = append(out, got...)
		if err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
	}
	return out, nil
}

// Extend renews a lease on its job's shard.
func (s *Store) Extend(ctx context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	return s.of(l.JobID).Extend(ctx, l, d)
}

// Complete completes a job on its shard.
func (s *Store) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.of(l.JobID).Complete(ctx, l, result)
}

// CompleteMany completes each shard's leases in one call per shard
// (jobstore.CompleteAll), errors back in the order of cs.
func (s *Store) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	errs := make([]error, len(cs))
	idx := make([][]int, len(s.shards))
	for k, c := range cs {
		i := s.index(c.Lease.JobID)
		idx[i] = append(idx[i], k)
	}
	for i, ks := range idx {
		if len(ks) == 0 {
			continue
		}
		part := make([]jobstore.Completion, len(ks))
		for n, k := range ks {
			part[n] = cs[k]
		}
		pe, err := jobstore.CompleteAll(ctx, s.shards[i], part)
		for n, k := range ks {
			if n < len(pe) {
				errs[k] = pe[n]
			}
		}
		if err != nil {
			return errs, fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return errs, nil
}

// Fail fails a job on its shard.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.of(l.JobID).Fail(ctx, l, reason)
}

// Recover takes back up to max expired leases over every shard. On an
// error it returns what the shards before it recovered, with the error.
func (s *Store) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	var out jobstore.RecoverResult
	first := s.start()
	for k := range s.shards {
		left := max - out.Len()
		if left <= 0 {
			break
		}
		i := (first + k) % len(s.shards)
		r, err := s.shards[i].Recover(ctx, left)
		out.Requeued = append(out.Requeued, r.Requeued...)
		out.DeadLettered = append(out.DeadLettered, r.DeadLettered...)
		out.Returned = append(out.Returned, r.Returned...)
		if err != nil {
			return out, fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return out, nil
}

// Promote moves up to max due jobs over every shard.
func (m *MoverStore) Promote(ctx context.Context, max int) (int, error) {
	n := 0
	first := m.start()
	for k := range m.shards {
		if n >= max {
			break
		}
		i := (first + k) % len(m.shards)
		got, err := m.shards[i].(jobstore.Mover).Promote(ctx, max-n)
		n += got
		if err != nil {
			return n, fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return n, nil
}

// Get reads a job from its shard.
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	return s.of(id).Get(ctx, id)
}

// Cancel cancels a job on its shard.
func (s *Store) Cancel(ctx context.Context, id string) error { return s.of(id).Cancel(ctx, id) }

// Stats adds up every shard's counts.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	return jobstore.SumStats(ctx, s.shards, func(i int) string { return fmt.Sprintf("shard %d", i) })
}

// Capabilities are the shards' without queue-wide order and atomic bulk
// enqueue (see the package doc), with batch completion, which Store
// implements over any shard (jobstore.SplitCapabilities).
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.SplitCapabilities(s.shards[0].Capabilities())
}

// Close closes every shard.
func (s *Store) Close() error { return jobstore.CloseAll(s.shards) }

// slots is Redis Cluster's hash slot count.
const slots = 16384

// crc16 is Redis Cluster's key hash (CRC16-CCITT, XMODEM), over the whole
// name: the shard's hash tag is {name}.
func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Locate asks each job's shard where its record sits (jobstore.Locator);
// it fails when a shard's store cannot say.
func (s *Store) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	out := make([]jobstore.Location, len(ids))
	idx := make([][]int, len(s.shards))
	for k, id := range ids {
		i := s.index(id)
		idx[i] = append(idx[i], k)
	}
	for i, ks := range idx {
		if len(ks) == 0 {
			continue
		}
		loc, ok := s.shards[i].(jobstore.Locator)
		if !ok {
			return nil, fmt.Errorf("shard %d: locate: %w", i, jobstore.ErrUnsupported)
		}
		part := make([]string, len(ks))
		for n, k := range ks {
			part[n] = ids[k]
		}
		got, err := loc.Locate(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i, err)
		}
		for n, k := range ks {
			out[k] = got[n]
		}
	}
	return out, nil
}
