package asynq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	hq "github.com/hibiken/asynq"

	"github.com/aebench/aebench/jobstore"
)

// enqueueFanOut is how many of a batch's jobs are enqueued at once: asynq
// has no batch enqueue, and its users send a batch as concurrent
// Client.Enqueue calls (one at a time, a batch of 100 made 100 serial round
// trips, about half asynq's speed in capacity.yaml's batched cells).
const enqueueFanOut = 16

// Enqueue validates every job, then enqueues them through asynq's Client,
// enqueueFanOut at a time: a duplicate id fails the batch with
// ErrDuplicateID, and the other jobs of the batch may be enqueued (not
// atomic, as Limits says).
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := jobstore.CheckBatch(jobs, s.o); err != nil {
		return err
	}
	now := s.o.Clock.Now()
	tasks := make([]*hq.Task, len(jobs))
	seen := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		t, err := s.task(j, now)
		if err != nil {
			return err
		}
		if seen[j.ID] {
			return fmt.Errorf("%w: %s twice in one Enqueue (nothing enqueued)", jobstore.ErrDuplicateID, j.ID)
		}
		seen[j.ID], tasks[i] = true, t
	}
	if len(jobs) == 1 {
		return s.enqueueOne(ctx, jobs[0], tasks[0], now)
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, enqueueFanOut)
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = s.enqueueOne(ctx, j, tasks[i], now)
		}()
	}
	wg.Wait()
	failed := 0
	var first error
	for _, err := range errs {
		if err != nil {
			failed++
			if first == nil || errors.Is(err, jobstore.ErrDuplicateID) && !errors.Is(first, jobstore.ErrDuplicateID) {
				first = err
			}
		}
	}
	if first != nil {
		return fmt.Errorf("%w (%d of %d jobs enqueued)", first, len(jobs)-failed, len(jobs))
	}
	return nil
}

func (s *Store) enqueueOne(ctx context.Context, j jobstore.NewJob, t *hq.Task, now time.Time) error {
	q, err := s.queueOf(j.Queue)
	if err != nil {
		return err
	}
	opts := []hq.Option{hq.TaskID(j.ID), hq.Queue(q), hq.MaxRetry(j.MaxRetries)}
	if !s.cfg.Native {
		opts = append(opts, hq.Retention(s.o.Retention))
	}
	if j.RunAt.After(now) {
		// asynq's forwarder compares with the machine's clock: the delay
		// is carried over from the store's clock.
		opts = append(opts, hq.ProcessAt(ceilSecond(time.Now().Add(j.RunAt.Sub(now)))))
	}
	if _, err := s.client.EnqueueContext(ctx, t, opts...); err != nil {
		if errors.Is(err, hq.ErrTaskIDConflict) {
			return fmt.Errorf("%w: %s", jobstore.ErrDuplicateID, j.ID)
		}
		return fmt.Errorf("asynq: Enqueue %s: %w", j.ID, err)
	}
	return nil
}

// ceilSecond rounds t up to a whole second: asynq keeps ProcessAt in whole
// Unix seconds, cut down, which would let a job start up to a second before
// its RunAt; rounded up it starts up to a second late instead.
func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); !u.Equal(t) {
		return u.Add(time.Second)
	}
	return t
}

func (s *Store) task(j jobstore.NewJob, now time.Time) (*hq.Task, error) {
	if err := jobstore.CheckJob(j, s.o); err != nil {
		return nil, err
	}
	h := map[string]string{}
	if !s.cfg.Native {
		// peer_mode native enqueues as asynq's users do, with no header:
		// Get's CreatedAt is then unknown (zero).
		h[hdrCreated] = strconv.FormatInt(now.UnixMilli(), 10)
	}
	for _, m := range []struct {
		key string
		v   any
		n   int
	}{{hdrHeaders, j.Headers, len(j.Headers)}, {hdrRoute, j.RouteParams, len(j.RouteParams)}, {hdrQuery, j.QueryParams, len(j.QueryParams)}} {
		if m.n == 0 {
			continue
		}
		b, err := json.Marshal(m.v)
		if err != nil {
			return nil, fmt.Errorf("%w: job %q %s: %v", jobstore.ErrInvalid, j.ID, m.key, err)
		}
		h[m.key] = string(b)
	}
	if len(h) == 0 {
		return hq.NewTask(typePrefix+j.Name, j.Payload), nil
	}
	return hq.NewTaskWithHeaders(typePrefix+j.Name, j.Payload, h), nil
}

// handle is the asynq handler: it offers the task to Claim, then waits for
// Complete or Fail. While the Store closes it keeps waiting, so asynq's
// shutdown pushes the task back to pending instead of counting a failure.
func (s *Store) handle(ctx context.Context, t *hq.Task) error {
	j, token := taskJob(ctx, t)
	if q, ok := hq.GetQueueName(ctx); ok {
		j.Queue = s.nameOf(q)
	}
	d := &delivery{job: j, token: token, release: make(chan outcome, 1)}
	select {
	case s.deliveries <- d:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		wait := time.NewTimer(s.untilExpiry(d))
		select {
		case out := <-d.release:
			wait.Stop()
			if out.err != nil {
				return out.err
			}
			if len(out.result) > 0 {
				if _, err := t.ResultWriter().Write(out.result); err != nil {
					return fmt.Errorf("write result: %w", err)
				}
			}
			return nil
		case <-ctx.Done():
			wait.Stop()
			s.drop(d)
			return ctx.Err()
		case <-wait.C:
			if s.expire(d) {
				// The worker holding it stopped renewing (it crashed):
				// asynq retries the task, or archives it when its retries
				// are spent, as Recover would.
				if d.job.RetryCount >= d.job.MaxRetries {
					return fmt.Errorf("aebench: lease expired: %w", hq.SkipRetry)
				}
				return &failure{reason: "aebench: lease expired"}
			}
		}
	}
}

// taskJob is the job a handler's task carries, InProgress, and the token
// of its attempt.
func taskJob(ctx context.Context, t *hq.Task) (jobstore.Job, string) {
	id, _ := hq.GetTaskID(ctx)
	retried, _ := hq.GetRetryCount(ctx)
	maxRetry, _ := hq.GetMaxRetry(ctx)
	j := jobFromTask(id, t.Type(), t.Payload(), t.Headers())
	j.RetryCount, j.MaxRetries, j.Status = retried, maxRetry, jobstore.StatusInProgress
	return j, id + "#" + strconv.Itoa(retried)
}

// untilExpiry is how long the handler of d waits before it checks d's
// lease again: until its deadline once claimed, a moment before.
func (s *Store) untilExpiry(d *delivery) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.deadline.IsZero() {
		return 5 * time.Millisecond
	}
	return max(d.deadline.Sub(s.o.Clock.Now()), time.Millisecond)
}

// expire forgets d when its lease has passed without a renewal; a later
// Complete or Fail of it gets ErrLeaseLost.
func (s *Store) expire(d *delivery) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[d.job.ID] != d || d.deadline.IsZero() || s.o.Clock.Now().Before(d.deadline) {
		return false
	}
	delete(s.held, d.job.ID)
	return true
}

// Claim returns up to req.Max tasks the server's handlers delivered,
// waiting up to req.Wait for the first.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := req.Check(); err != nil {
		return nil, err
	}
	if err := s.serve(hq.HandlerFunc(s.handle), false); err != nil {
		return nil, err
	}
	var got []*delivery
	if req.Wait > 0 {
		t := time.NewTimer(req.Wait)
		select {
		case d := <-s.deliveries:
			got = append(got, d)
		case <-t.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		t.Stop()
	}
drain:
	for len(got) < req.Max {
		select {
		case d := <-s.deliveries:
			got = append(got, d)
		default:
			break drain
		}
	}
	now := s.o.Clock.Now()
	deadline := now.Add(req.Lease)
	out := make([]jobstore.Claimed, len(got))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range got {
		d.job.WorkerID, d.job.StartedAt, d.job.LastUpdatedAt = req.WorkerID, now, now
		d.job.LeaseToken, d.job.LeaseDeadline = d.token, deadline
		d.deadline = deadline
		s.held[d.job.ID] = d
		out[i] = jobstore.Claimed{Job: d.job, Lease: jobstore.Lease{JobID: d.job.ID, Token: d.token, Deadline: deadline, Attempt: d.job.RetryCount}}
	}
	return out, nil
}

// take removes and returns the delivery l holds, or ErrLeaseLost.
func (s *Store) take(l jobstore.Lease) (*delivery, error) {
	if l.JobID == "" || l.Token == "" {
		return nil, fmt.Errorf("%w: Lease: JobID and Token must be set (use the Lease Claim returned)", jobstore.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.held[l.JobID]
	if d == nil || d.token != l.Token {
		return nil, fmt.Errorf("%w: job %s: this Store's asynq server no longer holds that attempt", jobstore.ErrLeaseLost, l.JobID)
	}
	delete(s.held, l.JobID)
	return d, nil
}

// drop forgets d when its handler gave up (asynq shut down or the task's
// own timeout): a later Complete gets ErrLeaseLost.
func (s *Store) drop(d *delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[d.job.ID] == d {
		delete(s.held, d.job.ID)
	}
}

// Complete releases the handler with the result; asynq then marks the task
// completed (asynchronously, see the package doc).
func (s *Store) Complete(_ context.Context, l jobstore.Lease, result []byte) error {
	d, err := s.take(l)
	if err != nil {
		return err
	}
	d.release <- outcome{result: result}
	return nil
}

// Fail releases the handler with an error carrying the retry delay;
// asynq schedules the retry or archives the task when retries are spent.
func (s *Store) Fail(_ context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	d, err := s.take(l)
	if err != nil {
		return jobstore.FailResult{}, err
	}
	out, res := s.failOutcome(d.job, reason)
	d.release <- out
	return res, nil
}

// failOutcome is what a handler returns when job fails: asynq's SkipRetry
// when its retries are spent (asynq archives it), else a failure carrying
// the retry delay.
func (s *Store) failOutcome(job jobstore.Job, reason string) (outcome, jobstore.FailResult) {
	if job.RetryCount >= job.MaxRetries {
		return outcome{err: fmt.Errorf("%s: %w", reason, hq.SkipRetry)}, jobstore.FailResult{Status: jobstore.StatusFailed}
	}
	delay := s.backoff(job.RetryCount)
	return outcome{err: &failure{reason: reason, delay: delay}}, jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: s.o.Clock.Now().Add(delay)}
}

// backoff is Options.Backoff's delay for retry n, jittered.
func (s *Store) backoff(n int) time.Duration {
	d := s.o.Backoff.Delay(n)
	if j := s.o.Backoff.Jitter; j > 0 {
		s.mu.Lock()
		f := 1 - j + 2*j*s.rng.Float64()
		s.mu.Unlock()
		d = time.Duration(float64(d) * f)
	}
	return d
}

// Extend checks that this Store still holds the attempt and moves the
// deadline its handler enforces; asynq's heartbeater renews asynq's own
// lease in Redis while the handler runs.
func (s *Store) Extend(_ context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	if d <= 0 {
		return jobstore.Lease{}, fmt.Errorf("%w: Extend: duration %v must be positive", jobstore.ErrInvalid, d)
	}
	if l.JobID == "" || l.Token == "" {
		return jobstore.Lease{}, fmt.Errorf("%w: Lease: JobID and Token must be set (use the Lease Claim returned)", jobstore.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[l.JobID]; h == nil || h.token != l.Token {
		return jobstore.Lease{}, fmt.Errorf("%w: job %s: this Store's asynq server no longer holds that attempt", jobstore.ErrLeaseLost, l.JobID)
	}
	l.Deadline = s.o.Clock.Now().Add(d)
	h := s.held[l.JobID]
	h.deadline = l.Deadline
	return l, nil
}

// Recover does nothing: asynq's recoverer runs inside every server.
func (s *Store) Recover(_ context.Context, max int) (jobstore.RecoverResult, error) {
	if err := jobstore.CheckMax("Recover", max); err != nil {
		return jobstore.RecoverResult{}, err
	}
	return jobstore.RecoverResult{}, s.check()
}

// Get reads a task through the Inspector.
func (s *Store) Get(_ context.Context, id string) (jobstore.Job, error) {
	if err := s.check(); err != nil {
		return jobstore.Job{}, err
	}
	if id == "" {
		return jobstore.Job{}, fmt.Errorf("%w: Get: id must not be empty", jobstore.ErrInvalid)
	}
	ti, err := s.taskInfo(id)
	if err != nil {
		return jobstore.Job{}, mapInspectorError("Get", id, err)
	}
	j := jobFromTask(ti.ID, ti.Type, ti.Payload, ti.Headers)
	j.Queue = s.nameOf(ti.Queue)
	j.Status = status(ti)
	j.Result, j.Error, j.RetryCount, j.MaxRetries = ti.Result, ti.LastErr, ti.Retried, ti.MaxRetry
	j.CompletedAt, j.RunAt = ti.CompletedAt, ti.NextProcessAt
	if j.Status == jobstore.StatusScheduled {
		j.RetryDelayUntil = ti.NextProcessAt
	}
	return j, nil
}

func mapInspectorError(op, id string, err error) error {
	if errors.Is(err, hq.ErrTaskNotFound) || errors.Is(err, hq.ErrQueueNotFound) {
		return fmt.Errorf("%w: %s", jobstore.ErrNotFound, id)
	}
	return fmt.Errorf("asynq: %s %s: %w", op, id, err)
}

func status(ti *hq.TaskInfo) jobstore.Status {
	switch ti.State {
	case hq.TaskStateActive:
		return jobstore.StatusInProgress
	case hq.TaskStateRetry:
		return jobstore.StatusScheduled
	case hq.TaskStateArchived:
		return jobstore.StatusFailed
	case hq.TaskStateCompleted:
		return jobstore.StatusCompleted
	}
	if ti.Retried > 0 {
		return jobstore.StatusScheduled
	}
	return jobstore.StatusQueued
}

func jobFromTask(id, typ string, payload []byte, h map[string]string) jobstore.Job {
	j := jobstore.Job{ID: id, Name: strings.TrimPrefix(typ, typePrefix), Payload: payload}
	if ms, err := strconv.ParseInt(h[hdrCreated], 10, 64); err == nil {
		j.CreatedAt = time.UnixMilli(ms)
	}
	// The headers were written by task(): a decoding error cannot happen
	// for them, and for a foreign task the field stays empty.
	if v := h[hdrHeaders]; v != "" {
		_ = json.Unmarshal([]byte(v), &j.Headers)
	}
	if v := h[hdrRoute]; v != "" {
		_ = json.Unmarshal([]byte(v), &j.RouteParams)
	}
	if v := h[hdrQuery]; v != "" {
		_ = json.Unmarshal([]byte(v), &j.QueryParams)
	}
	return j
}

// Cancel deletes a pending, scheduled or retry task.
func (s *Store) Cancel(_ context.Context, id string) error {
	if err := s.check(); err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%w: Cancel: id must not be empty", jobstore.ErrInvalid)
	}
	ti, err := s.taskInfo(id)
	if err != nil {
		return mapInspectorError("Cancel", id, err)
	}
	switch ti.State {
	case hq.TaskStatePending, hq.TaskStateScheduled, hq.TaskStateRetry:
	default:
		return fmt.Errorf("%w: %s is %v", jobstore.ErrNotCancelable, id, ti.State)
	}
	if err := s.insp.DeleteTask(ti.Queue, id); err != nil {
		if strings.Contains(err.Error(), "active") {
			return fmt.Errorf("%w: %s became active", jobstore.ErrNotCancelable, id)
		}
		return mapInspectorError("Cancel", id, err)
	}
	return nil
}

// Stats reads asynq's queue counters.
func (s *Store) Stats(_ context.Context) (jobstore.Stats, error) {
	if err := s.check(); err != nil {
		return jobstore.Stats{}, err
	}
	var out jobstore.Stats
	for _, q := range s.queueNames() {
		qi, err := s.insp.GetQueueInfo(q)
		// GetQueueInfo does not wrap ErrQueueNotFound; its message says NOT_FOUND.
		if err != nil && (errors.Is(err, hq.ErrQueueNotFound) || strings.Contains(err.Error(), "NOT_FOUND")) {
			continue
		}
		if err != nil {
			return jobstore.Stats{}, fmt.Errorf("asynq: Stats: %w", err)
		}
		out.Add(jobstore.Stats{Due: int64(qi.Pending), Delayed: int64(qi.Scheduled + qi.Retry), InProgress: int64(qi.Active),
			Dead: int64(qi.Archived), Completed: int64(qi.ProcessedTotal - qi.FailedTotal)})
	}
	return out, nil
}

// taskInfo finds task id in the first of the store's queues that has it.
func (s *Store) taskInfo(id string) (*hq.TaskInfo, error) {
	var err error
	for _, q := range s.queueNames() {
		var ti *hq.TaskInfo
		if ti, err = s.insp.GetTaskInfo(q, id); err == nil {
			return ti, nil
		}
		if !errors.Is(err, hq.ErrTaskNotFound) && !errors.Is(err, hq.ErrQueueNotFound) {
			return nil, err
		}
	}
	return nil, err
}

// nameOf is the scenario's name of asynq queue q ("" with one queue).
func (s *Store) nameOf(q string) string {
	if len(s.o.Queues) == 0 {
		return ""
	}
	return strings.TrimPrefix(q, s.o.Queue+".")
}
