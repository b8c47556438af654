// Package queues makes several queues of one job store seen as one store
// with a claim policy, as asynq's weighted and strict-priority queues,
// Sidekiq's weighted queues and RQ's ordered queues do: each queue is a
// complete store of its own (its own hash tag), a job goes to the queue
// its NewJob.Queue names, and Claim visits the queues in the order the
// policy gives:
//
//   - strict: always in the queues' order, so a queue is served only when
//     every queue before it is empty (the low queue starves under load);
//   - weighted: a fresh order per Claim, each queue drawn in turn with a
//     probability proportional to its weight among those not yet drawn
//     (asynq's and Sidekiq's weighted random order), so the queues are
//     served in proportion to their weights while all have work;
//   - round_robin: from a first queue that rotates from call to call.
//
// Priorities are queues in order: the first queue is the highest. Any job
// store and the floor can be split into queues; it keeps what each queue
// keeps and loses queue-wide order (no CapQueueOrder, no CapStrictFIFO)
// and atomic bulk enqueue (a batch splits by queue), and declares
// jobstore.CapQueues. A lease carries its queue in its token ("q1:" and
// the queue's own token), so Complete, Fail and Extend go to that queue
// alone; Get and Cancel ask the queues in turn. A waiting Claim first
// tries every queue without waiting, then blocks on the policy's first
// queue for a slice of its wait, and repeats.
package queues

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

// Claim policies.
const (
	Strict     = "strict"
	Weighted   = "weighted"
	RoundRobin = "round_robin"
)

// Policies lists the claim policies.
func Policies() []string { return []string{Strict, Weighted, RoundRobin} }

// waitSlice is how long (wall clock) a waiting Claim blocks on one queue
// before it looks at the others again.
const waitSlice = 50 * time.Millisecond

// Store is several queues of one store seen as one jobstore.Store.
type Store struct {
	names   []string
	weights []int
	policy  string
	qs      []jobstore.Store
	clk     clock.Clock
	next    atomic.Uint64
	mu      sync.Mutex
	rng     *rand.Rand
}

// MoverStore is a Store whose queues are jobstore.Movers.
type MoverStore struct{ *Store }

// New builds one store per queue with build(ctx, i, name), name
// <queue>.<queue's name>, and returns them as one store under policy.
func New(ctx context.Context, queue string, qs []jobstore.QueueWeight, policy string, clk clock.Clock, build func(ctx context.Context, i int, name string) (jobstore.Store, error)) (jobstore.Store, error) {
	if len(qs) < 2 {
		return nil, fmt.Errorf("%w: queues: %d given, want 2 or more", jobstore.ErrInvalid, len(qs))
	}
	switch policy {
	case Strict, Weighted, RoundRobin:
	default:
		return nil, fmt.Errorf("%w: queue policy %q: allowed: %s", jobstore.ErrInvalid, policy, strings.Join(Policies(), ", "))
	}
	if clk == nil {
		clk = clock.Real{}
	}
	s := &Store{policy: policy, clk: clk, rng: rand.New(rand.NewPCG(1, 2))}
	for i, q := range qs {
		if q.Weight < 1 {
			return nil, fmt.Errorf("%w: queue %s: weight %d, want >= 1", jobstore.ErrInvalid, q.Name, q.Weight)
		}
		st, err := build(ctx, i, queue+"."+q.Name)
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("queue %s: %w", q.Name, err)
		}
		s.names, s.weights, s.qs = append(s.names, q.Name), append(s.weights, q.Weight), append(s.qs, st)
	}
	if _, ok := s.qs[0].(jobstore.Mover); ok {
		return &MoverStore{s}, nil
	}
	return s, nil
}

// index is the queue a NewJob names ("" the first).
func (s *Store) index(name string) (int, error) {
	if name == "" {
		return 0, nil
	}
	for i, n := range s.names {
		if n == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: queue %q: the store's queues are %s", jobstore.ErrInvalid, name, strings.Join(s.names, ", "))
}

// order is the queues in the order a Claim visits them.
func (s *Store) order() []int {
	out := make([]int, len(s.qs))
	switch s.policy {
	case Strict:
		for i := range out {
			out[i] = i
		}
	case RoundRobin:
		first := int(s.next.Add(1) % uint64(len(s.qs)))
		for i := range out {
			out[i] = (first + i) % len(s.qs)
		}
	default:
		left := make([]int, len(s.qs))
		total := 0
		for i := range left {
			left[i], total = i, total+s.weights[i]
		}
		s.mu.Lock()
		for k := range out {
			r := s.rng.IntN(total)
			for j, i := range left {
				if r < s.weights[i] {
					out[k], total = i, total-s.weights[i]
					left = append(left[:j], left[j+1:]...)
					break
				}
				r -= s.weights[i]
			}
		}
		s.mu.Unlock()
	}
	return out
}

// Enqueue stores each queue's part of jobs atomically; the batch as a
// whole is not atomic.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	parts := make([][]jobstore.NewJob, len(s.qs))
	for _, j := range jobs {
		i, err := s.index(j.Queue)
		if err != nil {
			return err
		}
		parts[i] = append(parts[i], j)
	}
	for i, p := range parts {
		if len(p) == 0 {
			continue
		}
		if err := s.qs[i].Enqueue(ctx, p...); err != nil {
			return fmt.Errorf("queue %s: %w", s.names[i], err)
		}
	}
	return nil
}

// Claim takes up to req.Max due jobs from the queues in the policy's
// order (see the package doc for how it waits).
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := base.ValidateClaim(req); err != nil {
		return nil, err
	}
	end := time.Now().Add(clock.RealDuration(s.clk, req.Wait))
	for {
		order := s.order()
		got, err := s.sweep(ctx, req, order)
		if err != nil || len(got) > 0 {
			return got, err
		}
		left := time.Until(end)
		if left < time.Millisecond || ctx.Err() != nil {
			return nil, nil
		}
		wait := req
		wait.Wait = time.Duration(float64(min(waitSlice, left)) * float64(time.Second) / float64(clock.RealDuration(s.clk, time.Second)))
		got, err = s.qs[order[0]].Claim(ctx, wait)
		if err != nil || len(got) > 0 {
			return s.mark(order[0], got), err
		}
	}
}

// sweep claims without waiting from the queues in order until it holds
// req.Max jobs.
func (s *Store) sweep(ctx context.Context, req jobstore.ClaimRequest, order []int) ([]jobstore.Claimed, error) {
	var out []jobstore.Claimed
	now := req
	now.Wait = 0
	for _, i := range order {
		if now.Max = req.Max - len(out); now.Max <= 0 {
			break
		}
		got, err := s.qs[i].Claim(ctx, now)
		out = append(out, s.mark(i, got)...)
		if err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, fmt.Errorf("queue %s: %w", s.names[i], err)
		}
	}
	return out, nil
}

// mark puts queue i in the leases' tokens and the jobs' records.
func (s *Store) mark(i int, cs []jobstore.Claimed) []jobstore.Claimed {
	for k := range cs {
		cs[k].Lease.Token = tag(i, cs[k].Lease.Token)
		cs[k].Job = s.markJob(i, cs[k].Job)
	}
	return cs
}

func (s *Store) markJob(i int, j jobstore.Job) jobstore.Job {
	if j.LeaseToken != "" {
		j.LeaseToken = tag(i, j.LeaseToken)
	}
	j.Queue = s.names[i]
	return j
}

func tag(i int, token string) string { return "q" + strconv.Itoa(i) + ":" + token }

// of is a lease's queue and the lease as that queue gave it.
func (s *Store) of(l jobstore.Lease) (int, jobstore.Lease, error) {
	if l.JobID == "" || l.Token == "" {
		return 0, l, fmt.Errorf("%w: Lease: JobID and Token must be set (use the Lease Claim returned)", jobstore.ErrInvalid)
	}
	q, tok, ok := strings.Cut(l.Token, ":")
	i, err := strconv.Atoi(strings.TrimPrefix(q, "q"))
	if !ok || !strings.HasPrefix(q, "q") || err != nil || i < 0 || i >= len(s.qs) {
		return 0, l, fmt.Errorf("%w: job %s: token %q names no queue of this store", jobstore.ErrLeaseLost, l.JobID, l.Token)
	}
	l.Token = tok
	return i, l, nil
}

// Extend renews a lease on its queue.
func (s *Store) Extend(ctx context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	i, ql, err := s.of(l)
	if err != nil {
		return jobstore.Lease{}, err
	}
	nl, err := s.qs[i].Extend(ctx, ql, d)
	if err == nil {
		nl.Token = tag(i, nl.Token)
	}
	return nl, err
}

// Complete completes a job on its queue.
func (s *Store) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	i, ql, err := s.of(l)
	if err != nil {
		return err
	}
	return s.qs[i].Complete(ctx, ql, result)
}

// CompleteMany completes each queue's leases in one call per queue.
func (s *Store) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	errs := make([]error, len(cs))
	idx := make([][]int, len(s.qs))
	parts := make([][]jobstore.Completion, len(s.qs))
	for k, c := range cs {
		i, ql, err := s.of(c.Lease)
		if err != nil {
			errs[k] = err
			continue
		}
		c.Lease = ql
		idx[i], parts[i] = append(idx[i], k), append(parts[i], c)
	}
	for i, ks := range idx {
		if len(ks) == 0 {
			continue
		}
		pe, err := jobstore.CompleteAll(ctx, s.qs[i], parts[i])
		for n, k := range ks {
			if n < len(pe) {
				errs[k] = pe[n]
			}
		}
		if err != nil {
			return errs, fmt.Errorf("queue %s: %w", s.names[i], err)
		}
	}
	return errs, nil
}

// Fail fails a job on its queue.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	i, ql, err := s.of(l)
	if err != nil {
		return jobstore.FailResult{}, err
	}
	return s.qs[i].Fail(ctx, ql, reason)
}

// Recover takes back up to max expired leases over every queue.
func (s *Store) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	var out jobstore.RecoverResult
	for i, q := range s.qs {
		left := max - out.Len()
		if left <= 0 {
			break
		}
		r, err := q.Recover(ctx, left)
		out.Requeued = append(out.Requeued, r.Requeued...)
		out.DeadLettered = append(out.DeadLettered, r.DeadLettered...)
		out.Returned = append(out.Returned, r.Returned...)
		if err != nil {
			return out, fmt.Errorf("queue %s: %w", s.names[i], err)
		}
	}
	return out, nil
}

// Promote moves up to max due jobs over every queue.
func (m *MoverStore) Promote(ctx context.Context, max int) (int, error) {
	n := 0
	for i, q := range m.qs {
		if n >= max {
			break
		}
		got, err := q.(jobstore.Mover).Promote(ctx, max-n)
		n += got
		if err != nil {
			return n, fmt.Errorf("queue %s: %w", m.names[i], err)
		}
	}
	return n, nil
}

// Get reads a job from the first queue that has it.
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	for i, q := range s.qs {
		j, err := q.Get(ctx, id)
		if errors.Is(err, jobstore.ErrNotFound) {
			continue
		}
		return s.markJob(i, j), err
	}
	return jobstore.Job{}, fmt.Errorf("%w: job %s in none of the queues", jobstore.ErrNotFound, id)
}

// Cancel cancels a job on the first queue that has it.
func (s *Store) Cancel(ctx context.Context, id string) error {
	for _, q := range s.qs {
		if err := q.Cancel(ctx, id); !errors.Is(err, jobstore.ErrNotFound) {
			return err
		}
	}
	return fmt.Errorf("%w: job %s in none of the queues", jobstore.ErrNotFound, id)
}

// Stats adds up every queue's counts.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	return jobstore.SumStats(ctx, s.qs, func(i int) string { return "queue " + s.names[i] })
}

// Capabilities are the queues' without queue-wide order and atomic bulk
// enqueue (jobstore.SplitCapabilities), with queues.
func (s *Store) Capabilities() jobstore.Capabilities {
	cs := jobstore.SplitCapabilities(s.qs[0].Capabilities())
	cs[jobstore.CapQueues] = true
	return cs
}

// Close closes every queue.
func (s *Store) Close() error { return jobstore.CloseAll(s.qs) }

// QueueNames are the queues' names, highest priority first.
func (s *Store) QueueNames() []string { return append([]string(nil), s.names...) }

// QueueWeights are the queues' weights, in QueueNames' order.
func (s *Store) QueueWeights() []int { return append([]int(nil), s.weights...) }

// QueuePolicy is the claim policy.
func (s *Store) QueuePolicy() string { return s.policy }
