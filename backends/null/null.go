// Package null is the calibration store: the jobstore contract in process
// memory, with no Redis and no client. A run against it measures what the
// harness itself adds to each latency; it is listed in the backend registry
// as a calibration, never compared with the job stores.
package null

import (
	"container/heap"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

// Name is the null store's name in the backend registry and in scenarios.
const Name = "null"

// Store is the calibration store: the whole contract in process memory,
// with a blocking claim that wakes the moment a job is due. It costs the
// harness next to nothing, so a run against it shows what the harness itself
// adds to each latency (scheduling, dispatch, bookkeeping, timer slack). It
// is not a job store: nothing survives the process, and it is never compared
// with the Redis backends.
type Store struct {
	o jobstore.Options

	mu    sync.Mutex
	jobs  map[string]*nullJob
	ready nullHeap
	// waiters are the blocked claimers, oldest first, each woken by one
	// job queued (wakeLocked).
	waiters []chan struct{}
	seq     uint64
	tokens  uint64
	done    int64
	dead    int64
	closed  bool
	// queued since the last wake (wakeLocked).
	queued int
}

type nullJob struct {
	j     jobstore.Job
	seq   uint64
	due   int64 // j.RunAt in unix ns: the heap compares integers
	index int   // in ready, or -1
}

// New returns an empty store.
func New(o jobstore.Options) (*Store, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Store{o: o, jobs: map[string]*nullJob{}}, nil
}

var _ jobstore.Store = (*Store)(nil)

func (s *Store) now() time.Time { return s.o.Clock.Now() }

// queueLocked puts j in the ready heap; the caller then wakes the claimers (wakeLocked).
func (s *Store) queueLocked(nj *nullJob) {
	s.seq++
	nj.seq, nj.due = s.seq, nj.j.RunAt.UnixNano()
	heap.Push(&s.ready, nj)
	s.queued++
}

// wakeLocked wakes a blocked claimer, the oldest, for each job queued since
// the last wake. Waking them all (a closed channel) woke every claimer for
// each job, and all but one went back to sleep: at 1000 jobs/s with four
// claimers the calibration's CPU a job fell from 150-157 to 137-138 µs
// (one run each, a make test beside them) when that went.
func (s *Store) wakeLocked() {
	for ; s.queued > 0 && len(s.waiters) > 0; s.queued-- {
		w := s.waiters[0]
		s.waiters = s.waiters[1:]
		w <- struct{}{}
	}
	s.queued = 0
}

// unwaitLocked takes w out of the waiters; a wake it got meanwhile, which
// its claimer will not act on, goes to the next waiter.
func (s *Store) unwaitLocked(w chan struct{}) {
	for i, x := range s.waiters {
		if x == w {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return
		}
	}
	select {
	case <-w:
		s.queued++
		s.wakeLocked()
	default:
	}
}

// Enqueue stores jobs atomically.
func (s *Store) Enqueue(_ context.Context, jobs ...jobstore.NewJob) error {
	if err := jobstore.CheckBatch(jobs, s.o); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return jobstore.ErrClosed
	}
	seen := map[string]bool{}
	for _, j := range jobs {
		if s.jobs[j.ID] != nil || seen[j.ID] {
			return fmt.Errorf("%w: %q", jobstore.ErrDuplicateID, j.ID)
		}
		seen[j.ID] = true
	}
	now := s.now()
	for _, j := range jobs {
		runAt := j.RunAt
		if runAt.Before(now) {
			runAt = now
		}
		nj := &nullJob{j: jobstore.Job{ID: j.ID, Name: j.Name, Status: jobstore.StatusQueued, Payload: j.Payload,
			MaxRetries: j.MaxRetries, CreatedAt: now, LastUpdatedAt: now, RunAt: runAt.Truncate(time.Millisecond)}}
		s.jobs[j.ID] = nj
		s.queueLocked(nj)
	}
	s.wakeLocked()
	return nil
}

// Claim pops due jobs, blocking until one is due or req.Wait passes.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	waitUntil := time.Now().Add(clock.RealDuration(s.o.Clock, req.Wait))
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, jobstore.ErrClosed
		}
		now := s.now()
		var out []jobstore.Claimed
		if n := min(req.Max, s.ready.Len()); n > 0 && s.ready[0].due <= now.UnixNano() {
			out = make([]jobstore.Claimed, 0, n)
		}
		for len(out) < req.Max && s.ready.Len() > 0 && !s.ready[0].j.RunAt.After(now) {
			nj := heap.Pop(&s.ready).(*nullJob)
			s.tokens++
			nj.j.Status = jobstore.StatusInProgress
			nj.j.WorkerID = req.WorkerID
			nj.j.StartedAt = now
			nj.j.LeaseToken = strconv.FormatUint(s.tokens, 36)
			nj.j.LeaseDeadline = now.Add(req.Lease)
			out = append(out, jobstore.Claimed{Job: nj.j, Lease: jobstore.Lease{JobID: nj.j.ID, Token: nj.j.LeaseToken,
				Deadline: nj.j.LeaseDeadline, Attempt: nj.j.RetryCount}})
		}
		next := time.Duration(-1)
		if s.ready.Len() > 0 {
			next = clock.RealDuration(s.o.Clock, s.ready[0].j.RunAt.Sub(now))
		}
		left := time.Until(waitUntil)
		if len(out) > 0 || left <= 0 {
			s.mu.Unlock()
			return out, nil
		}
		wake := make(chan struct{}, 1)
		s.waiters = append(s.waiters, wake)
		s.mu.Unlock()
		if next >= 0 && next < left {
			left = next + time.Millisecond
		}
		t := time.NewTimer(left)
		select {
		case <-ctx.Done():
			t.Stop()
			s.mu.Lock()
			s.unwaitLocked(wake)
			s.mu.Unlock()
			return nil, nil
		case <-wake:
			t.Stop()
		case <-t.C:
			s.mu.Lock()
			s.unwaitLocked(wake)
			s.mu.Unlock()
		}
	}
}

// leased returns the job a lease names, or ErrLeaseLost.
func (s *Store) leased(l jobstore.Lease) (*nullJob, error) {
	if s.closed {
		return nil, jobstore.ErrClosed
	}
	nj := s.jobs[l.JobID]
	if nj == nil || nj.j.Status != jobstore.StatusInProgress || nj.j.LeaseToken != l.Token {
		return nil, fmt.Errorf("%w: %q", jobstore.ErrLeaseLost, l.JobID)
	}
	return nj, nil
}

// Extend moves the lease deadline.
func (s *Store) Extend(_ context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nj, err := s.leased(l)
	if err != nil {
		return l, err
	}
	nj.j.LeaseDeadline = s.now().Add(d)
	l.Deadline = nj.j.LeaseDeadline
	return l, nil
}

// Complete finishes a job and forgets it: the calibration store keeps no
// retention, since it has no memory to measure.
func (s *Store) Complete(_ context.Context, l jobstore.Lease, _ []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.leased(l); err != nil {
		return err
	}
	delete(s.jobs, l.JobID)
	s.done++
	return nil
}

// Fail retries with backoff or dead-letters.
func (s *Store) Fail(_ context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nj, err := s.leased(l)
	if err != nil {
		return jobstore.FailResult{}, err
	}
	now := s.now()
	nj.j.Error = reason
	if nj.j.RetryCount < nj.j.MaxRetries {
		nj.j.RunAt = now.Add(s.o.Backoff.Delay(l.Attempt)).Truncate(time.Millisecond)
		nj.j.RetryCount++
		nj.j.Status = jobstore.StatusScheduled
		s.queueLocked(nj)
		s.wakeLocked()
		return jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: nj.j.RunAt}, nil
	}
	delete(s.jobs, l.JobID)
	s.dead++
	return jobstore.FailResult{Status: jobstore.StatusFailed}, nil
}

// Recover takes back expired leases.
func (s *Store) Recover(_ context.Context, max int) (jobstore.RecoverResult, error) {
	var res jobstore.RecoverResult
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return res, jobstore.ErrClosed
	}
	now := s.now()
	for id, nj := range s.jobs {
		if len(res.Requeued)+len(res.DeadLettered) >= max {
			break
		}
		if nj.j.Status != jobstore.StatusInProgress || nj.j.LeaseDeadline.After(now) {
			continue
		}
		if nj.j.RetryCount < nj.j.MaxRetries {
			nj.j.RetryCount++
			nj.j.RunAt = now.Truncate(time.Millisecond)
			nj.j.Status = jobstore.StatusScheduled
			nj.j.LeaseToken = ""
			s.queueLocked(nj)
			res.Requeued = append(res.Requeued, id)
		} else {
			delete(s.jobs, id)
			s.dead++
			res.DeadLettered = append(res.DeadLettered, id)
		}
	}
	s.wakeLocked()
	return res, nil
}

// Get returns a live job.
func (s *Store) Get(_ context.Context, id string) (jobstore.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if nj := s.jobs[id]; nj != nil {
		return nj.j, nil
	}
	return jobstore.Job{}, fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
}

// Cancel removes a waiting job.
func (s *Store) Cancel(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	nj := s.jobs[id]
	if nj == nil {
		return fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
	}
	if nj.index < 0 {
		return fmt.Errorf("%w: %q", jobstore.ErrNotCancelable, id)
	}
	heap.Remove(&s.ready, nj.index)
	delete(s.jobs, id)
	return nil
}

// Stats counts the queue.
func (s *Store) Stats(context.Context) (jobstore.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := jobstore.Stats{Dead: s.dead, Completed: s.done}
	now := s.now()
	for _, nj := range s.jobs {
		switch {
		case nj.j.Status == jobstore.StatusInProgress:
			st.InProgress++
		case nj.j.RunAt.After(now):
			st.Delayed++
		default:
			st.Due++
		}
	}
	return st, nil
}

// Capabilities of the calibration store.
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapBlockingClaim: true, jobstore.CapNativeDelay: true,
		jobstore.CapStoreClockLeases: true, jobstore.CapStrictFIFO: true, jobstore.CapExactStats: true,
		// The core, but for records: they live in memory, forgotten when
		// a job finishes, in no encoding.
		jobstore.CapFencing: true, jobstore.CapLeaseRecovery: true, jobstore.CapRetries: true,
		jobstore.CapDelayedJobs: true, jobstore.CapCancel: true, jobstore.CapUniqueIDs: true,
		jobstore.CapAtomicBulk: true, jobstore.CapStoreClock: true}
}

// Close marks the store closed and wakes its blocked claimers, which
// return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, w := range s.waiters {
		w <- struct{}{}
	}
	s.waiters = nil
	s.mu.Unlock()
	return nil
}

// nullHeap orders ready jobs by RunAt, then enqueue order.
type nullHeap []*nullJob

func (h nullHeap) Len() int { return len(h) }
func (h nullHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h nullHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *nullHeap) Push(x any) {
	nj := x.(*nullJob)
	nj.index = len(*h)
	*h = append(*h, nj)
}
func (h *nullHeap) Pop() any {
	old := *h
	nj := old[len(old)-1]
	old[len(old)-1] = nil
	nj.index = -1
	*h = old[:len(old)-1]
	return nj
}
