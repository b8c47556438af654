// Package floor is the reference floor: the least a job with a record can
// cost on Redis, measured on the same machine, by the same producers and
// workers, at the same batch sizes as the job stores. It is a reference,
// not a job store: it keeps no leases, no retries, no fencing and no delayed
// jobs, so a crashed worker's job stays claimed forever and a second
// Complete overwrites the first. Tables show every store's cost as a ratio
// to it; it never enters claims or verdicts.
//
// Keys (all under the queue's hash tag, ae:{queue}:floor:...):
//
//	ready       LIST  ids waiting, pushed at the head, claimed from the tail (FIFO)
//	processing  LIST  ids claimed and not yet completed
//	job:<id>    HASH  the job record (the hash encoding's fields)
//
// Cost per job (B jobs in a batch):
//
//	operation     commands                               round trips
//	Enqueue       HSET per job + one LPUSH of the batch  1 per batch (pipelined)
//	Claim (1)     LMOVE (BLMOVE when waiting), HGET      2
//	Claim (B)     LMPOP (BLMPOP when waiting), then      2 per batch
//	              LPUSH + HGET per job (pipelined)
//	Complete      LREM + HSET                            1 (pipelined)
//	CompleteMany  LREM + HSET per job                    1 per batch (pipelined)
//	Cancel        LREM, then HSET or EXISTS              2
//	Stats         LLEN, LLEN                             1 (pipelined)
//
// A claim reads the payload (HGET), because a worker needs it, and writes
// no record: the record says Queued until the job completes. A completion
// writes the outcome only (Status, and Result when there is one), as a
// plain list queue does: Status is overwritten in place, where a new
// CompletedAt field cost Redis 17% more work a job (see CompleteMany). Claims push
// onto processing's head, and a completion's LREM scans from its tail
// (count -1), where the oldest claims are: O(1) when jobs finish in the
// order they were claimed, O(jobs in flight) at worst.
//
// What it cannot do returns an error wrapping errors.ErrUnsupported and is
// declared through Capabilities (see Limits): Extend, Fail and Recover, an
// Enqueue with a RunAt after now, and EncodingJSON.
package floor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/backends/internal/record"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Doc is the one-line description the registry prints.
const Doc = "reference, not a job store: HSET+LPUSH at enqueue, BLMOVE/LMPOP at claim, LREM+HSET at completion; the least a job with a record costs"

// Limits is what the floor does not guarantee, printed beside its numbers.
const Limits = "no leases, heartbeats or recovery (a crashed worker's jobs stay in processing); " +
	"no retries (Fail is unsupported); no fencing (a second Complete overwrites); no delayed jobs (RunAt after now is refused); " +
	"no duplicate-id check (a duplicate overwrites the record and is queued twice); bulk enqueue is pipelined, not atomic; " +
	"records never expire; hash encoding only; a claim does not update the record (Get says Queued while the job runs), " +
	"and a completion writes its Status (and Result) only: Get gives no CompletedAt; " +
	"Stats.Completed counts this Store value's completions only"

// token is the lease token of every claim: there are no leases to tell apart.
const token = "floor"

// Caps returns what the floor declares; Store.Capabilities returns the same.
func Caps() jobstore.Capabilities {
	return jobstore.Capabilities{
		jobstore.CapBlockingClaim: true,
		jobstore.CapStrictFIFO:    true,
		jobstore.CapExactStats:    true,
		jobstore.CapBatchComplete: true,
		jobstore.CapCancel:        true,
		jobstore.CapStoreClock:    true,
	}
}

// Store is the floor on one queue.
type Store struct {
	c    rclient.Client
	o    jobstore.Options
	keys keys.Keys
	// Ready and Processing are the two lists' keys.
	Ready, Processing string
	w                 words
	// block caches the last blocking claim's timeout, formatted.
	block  atomic.Pointer[blockArgs]
	done   atomic.Int64
	closed atomic.Bool
}

// words are the fixed parts of the floor's commands, built once: a
// []string literal in a call is an allocation a job. rclient only reads
// them.
type words struct {
	blmove, lmove, hget, lrem, hset []string
	moveKeys, processing            []string
	moveArgs, payload               []string
	// done is a completion's fields without a result: Status only, an
	// in-place overwrite of the field Enqueue wrote (see CompleteMany).
	done []string
}

// blockArgs is a block of d as BLMPOP's timeout (secs) and BLMOVE's
// arguments.
type blockArgs struct {
	d      time.Duration
	secs   string
	blmove []string
}

var (
	_ jobstore.Store          = (*Store)(nil)
	_ jobstore.BatchCompleter = (*Store)(nil)
)

// New returns the floor on queue o.Queue. It touches no Redis.
func New(_ context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	if o.Encoding != jobstore.EncodingHash {
		return nil, fmt.Errorf("floor: Options.Encoding %q: only %q: %w", o.Encoding, jobstore.EncodingHash, errors.ErrUnsupported)
	}
	if c == nil {
		return nil, fmt.Errorf("%w: floor: no Redis client", jobstore.ErrInvalid)
	}
	k := keys.New(o.Queue)
	s := &Store{c: c, o: o, keys: k, Ready: k.FloorReady(), Processing: k.FloorProcessing()}
	s.w = words{blmove: []string{"BLMOVE"}, lmove: []string{"LMOVE"}, hget: []string{"HGET"}, lrem: []string{"LREM"}, hset: []string{"HSET"},
		moveKeys: []string{s.Ready, s.Processing}, processing: []string{s.Processing},
		moveArgs: []string{"RIGHT", "LEFT"}, payload: []string{"Payload"}, done: []string{"Status", strconv.Itoa(int(jobstore.StatusCompleted))}}
	return s, nil
}

// blockArgs is a block of d, formatted once for as long as d stays the
// same (a claim wait without a context deadline).
func (s *Store) blockArgs(d time.Duration) *blockArgs {
	if b := s.block.Load(); b != nil && b.d == d {
		return b
	}
	secs := strconv.FormatFloat(max(d, time.Millisecond).Seconds(), 'f', 3, 64)
	b := &blockArgs{d: d, secs: secs, blmove: []string{"RIGHT", "LEFT", secs}}
	s.block.Store(b)
	return b
}

func (s *Store) job(id string) string { return s.keys.FloorJob(id) }

func (s *Store) check() error {
	if s.closed.Load() {
		return jobstore.ErrClosed
	}
	return nil
}

func unsupported(op string) error {
	return fmt.Errorf("floor: %s: the reference floor has no leases, retries or recovery: %w", op, errors.ErrUnsupported)
}

// Enqueue stores each record with one HSET and queues the batch with one
// LPUSH, all in one round trip.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := jobstore.CheckBatch(jobs, s.o); err != nil {
		return err
	}
	now := s.o.Clock.Now()
	cmds := make([]rclient.Command, 0, len(jobs)+1)
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if err := s.validate(j, now); err != nil {
			return err
		}
		runAt := j.RunAt
		if runAt.IsZero() {
			runAt = now
		}
		pairs, err := record.NewPairs(j, runAt, now)
		if err != nil {
			return err
		}
		pairs = append(pairs, "Status", strconv.Itoa(int(jobstore.StatusQueued)))
		cmds = append(cmds, rclient.Cmd("HSET", s.job(j.ID), pairs...))
		ids = append(ids, j.ID)
	}
	cmds = append(cmds, rclient.Cmd("LPUSH", s.Ready, ids...))
	return firstError("floor: Enqueue", s.c.DoMulti(ctx, cmds...))
}

// validate checks what the floor adds to the contract's rules
// (jobstore.CheckBatch has run): no delayed jobs.
func (s *Store) validate(j jobstore.NewJob, now time.Time) error {
	switch {
	case j.RunAt.After(now):
		return fmt.Errorf("floor: NewJob.RunAt of job %q is in the future: no delayed jobs: %w", j.ID, errors.ErrUnsupported)
	}
	return nil
}

func firstError(op string, rs []rclient.Result) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("%s: %w", op, r.Err)
		}
	}
	return nil
}

// Claim moves up to req.Max ids from ready to processing and reads their
// payloads: LMOVE and HGET for one, LMPOP, then LPUSH and an HGET per job
// for several; the blocking forms when req.Wait > 0.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := base.ValidateClaim(req); err != nil {
		return nil, err
	}
	block := clock.RealDuration(s.o.Clock, req.Wait)
	if dl, ok := ctx.Deadline(); ok && block > 0 {
		// Leave the reply time to arrive before the caller gives up, so a
		// moved id is never dropped by a timed-out read.
		block = min(block, time.Until(dl)-50*time.Millisecond)
		if block <= 0 {
			return nil, nil
		}
	}
	if req.Max == 1 {
		return s.claimOne(ctx, req, block)
	}
	ids, payloads, err := s.take(ctx, req.Max, block)
	if err != nil {
		if rclient.Ended(ctx) && len(ids) == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("floor: Claim: %w", err)
	}
	now := s.o.Clock.Now()
	out := make([]jobstore.Claimed, len(ids))
	for i, id := range ids {
		out[i] = claimed(id, payloadAt(payloads, i), req, now)
	}
	return out, nil
}

func claimed(id string, payload []byte, req jobstore.ClaimRequest, now time.Time) jobstore.Claimed {
	deadline := now.Add(req.Lease)
	return jobstore.Claimed{
		Job: jobstore.Job{ID: id, Payload: payload, Status: jobstore.StatusInProgress, WorkerID: req.WorkerID,
			StartedAt: now, LastUpdatedAt: now, LeaseToken: token, LeaseDeadline: deadline},
		Lease: jobstore.Lease{JobID: id, Token: token, Deadline: deadline},
	}
}

// claimOne is Claim of one job: LMOVE (BLMOVE when block > 0), then HGET
// of its payload.
func (s *Store) claimOne(ctx context.Context, req jobstore.ClaimRequest, block time.Duration) ([]jobstore.Claimed, error) {
	var v any
	var err error
	if block > 0 {
		v, err = s.c.DoBlocking(ctx, rclient.Command{Head: s.w.blmove, Keys: s.w.moveKeys, Args: s.blockArgs(block).blmove})
	} else {
		v, err = s.c.Do(ctx, rclient.Command{Head: s.w.lmove, Keys: s.w.moveKeys, Args: s.w.moveArgs})
	}
	id, ok := v.(string)
	if err != nil || !ok {
		if err == nil || rclient.Ended(ctx) {
			return nil, nil
		}
		return nil, fmt.Errorf("floor: Claim: %w", err)
	}
	// The id is in processing now: read its payload even if ctx ends.
	p, err := s.c.Do(context.WithoutCancel(ctx), rclient.Command{Head: s.w.hget, Keys: []string{s.job(id)}, Args: s.w.payload})
	if err != nil {
		return nil, fmt.Errorf("floor: Claim: read the payload of %s: %w", id, err)
	}
	ps, _ := p.(string)
	return []jobstore.Claimed{claimed(id, []byte(ps), req, s.o.Clock.Now())}, nil
}

func payloadAt(ps [][]byte, i int) []byte {
	if i < len(ps) {
		return ps[i]
	}
	return nil
}

// take returns the ids it moved into processing, with their payloads.
func (s *Store) take(ctx context.Context, most int, block time.Duration) ([]string, [][]byte, error) {
	n := strconv.Itoa(most)
	var v any
	var err error
	if block > 0 {
		v, err = s.c.DoBlocking(ctx, rclient.Command{Head: []string{"BLMPOP", s.blockArgs(block).secs, "1"}, Keys: []string{s.Ready}, Args: []string{"RIGHT", "COUNT", n}})
	} else {
		v, err = s.c.Do(ctx, rclient.Command{Head: []string{"LMPOP", "1"}, Keys: []string{s.Ready}, Args: []string{"RIGHT", "COUNT", n}})
	}
	if err != nil {
		return nil, nil, err
	}
	// The reply is nil or [key, [id...]].
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return nil, nil, nil
	}
	ids := base.Strings(arr[1])
	if len(ids) == 0 {
		return nil, nil, nil
	}
	cmds := make([]rclient.Command, 0, 1+len(ids))
	cmds = append(cmds, rclient.Cmd("LPUSH", s.Processing, ids...))
	for _, id := range ids {
		cmds = append(cmds, rclient.Command{Head: s.w.hget, Keys: []string{s.job(id)}, Args: s.w.payload})
	}
	rs := s.c.DoMulti(context.WithoutCancel(ctx), cmds...)
	if err := firstError("record popped ids as processing and read their payloads", rs); err != nil {
		return ids, nil, err
	}
	payloads := make([][]byte, len(ids))
	for i := range ids {
		p, _ := rs[1+i].Val.(string)
		payloads[i] = []byte(p)
	}
	return ids, payloads, nil
}

// Complete removes the id from processing and writes the outcome into the
// record, in one round trip. There is no fencing: it succeeds for any lease.
func (s *Store) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	errs, err := s.CompleteMany(ctx, []jobstore.Completion{{Lease: l, Result: result}})
	if err != nil {
		return err
	}
	return errs[0]
}

// CompleteMany is Complete for a batch, in one round trip.
func (s *Store) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	errs := make([]error, len(cs))
	cmds := make([]rclient.Command, 0, 2*len(cs))
	for i, c := range cs {
		if err := base.ValidateLease(c.Lease); err != nil {
			errs[i] = err
			continue
		}
		id := c.Lease.JobID
		// The outcome only, as a plain list queue writes it: Status is
		// overwritten in place. A CompletedAt field would be new to the
		// record's listpack, and appending it cost Redis 17% more work a
		// job (callgrind: 20.6k instructions in processCommand a job
		// against 17.5k for the plain list's one-field HSET).
		fields := s.w.done
		if len(c.Result) > 0 {
			fields = []string{"Status", s.w.done[1], "Result", string(c.Result)}
		}
		cmds = append(cmds, rclient.Command{Head: s.w.lrem, Keys: s.w.processing, Args: []string{"-1", id}},
			rclient.Command{Head: s.w.hset, Keys: []string{s.job(id)}, Args: fields})
	}
	if len(cmds) == 0 {
		return errs, nil
	}
	if err := firstError("floor: Complete", s.c.DoMulti(ctx, cmds...)); err != nil {
		return errs, err
	}
	s.done.Add(int64(len(cmds) / 2))
	return errs, nil
}

// Extend is unsupported: there are no leases.
func (s *Store) Extend(context.Context, jobstore.Lease, time.Duration) (jobstore.Lease, error) {
	return jobstore.Lease{}, unsupported("Extend")
}

// Fail is unsupported: there are no retries and no dead letters.
func (s *Store) Fail(context.Context, jobstore.Lease, string) (jobstore.FailResult, error) {
	return jobstore.FailResult{}, unsupported("Fail")
}

// Recover is unsupported: there are no leases to expire.
func (s *Store) Recover(context.Context, int) (jobstore.RecoverResult, error) {
	return jobstore.RecoverResult{}, unsupported("Recover")
}

// Get reads a record.
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	if err := s.check(); err != nil {
		return jobstore.Job{}, err
	}
	if id == "" {
		return jobstore.Job{}, fmt.Errorf("%w: Get: id must not be empty", jobstore.ErrInvalid)
	}
	v, err := s.c.Do(ctx, rclient.Cmd("HGETALL", s.job(id)))
	if err != nil {
		return jobstore.Job{}, fmt.Errorf("floor: Get %s: %w", id, err)
	}
	if m, ok := v.(map[string]any); v == nil || ok && len(m) == 0 {
		return jobstore.Job{}, fmt.Errorf("%w: %s", jobstore.ErrNotFound, id)
	}
	if a, ok := v.([]any); ok && len(a) == 0 {
		return jobstore.Job{}, fmt.Errorf("%w: %s", jobstore.ErrNotFound, id)
	}
	return record.DecodeOf(id, v)
}

// Cancel removes a waiting id from ready and marks its record Canceled.
func (s *Store) Cancel(ctx context.Context, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: Cancel: id must not be empty", jobstore.ErrInvalid)
	}
	v, err := s.c.Do(ctx, rclient.Cmd("LREM", s.Ready, "1", id))
	if err != nil {
		return fmt.Errorf("floor: Cancel %s: %w", id, err)
	}
	if base.Int(v) == 0 {
		n, err := s.c.Do(ctx, rclient.Cmd("EXISTS", s.job(id)))
		if err != nil {
			return fmt.Errorf("floor: Cancel %s: %w", id, err)
		}
		if base.Int(n) == 0 {
			return fmt.Errorf("%w: %s", jobstore.ErrNotFound, id)
		}
		return fmt.Errorf("%w: %s is not waiting", jobstore.ErrNotCancelable, id)
	}
	ms := base.Ms(s.o.Clock.Now())
	_, err = s.c.Do(ctx, rclient.Cmd("HSET", s.job(id), "Status", strconv.Itoa(int(jobstore.StatusCanceled)), "CompletedAt", ms, "LastUpdatedAt", ms))
	if err != nil {
		return fmt.Errorf("floor: Cancel %s: %w", id, err)
	}
	return nil
}

// Stats counts both lists; Delayed and Dead are always 0.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.check(); err != nil {
		return jobstore.Stats{}, err
	}
	rs := s.c.DoMulti(ctx, rclient.Cmd("LLEN", s.Ready), rclient.Cmd("LLEN", s.Processing))
	if err := firstError("floor: Stats", rs); err != nil {
		return jobstore.Stats{}, err
	}
	return jobstore.Stats{Due: base.Int(rs[0].Val), InProgress: base.Int(rs[1].Val), Completed: s.done.Load()}, nil
}

// Capabilities returns Caps().
func (s *Store) Capabilities() jobstore.Capabilities { return Caps() }

// Close makes later calls fail with ErrClosed; the client stays open.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}
