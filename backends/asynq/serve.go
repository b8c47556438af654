package asynq

// Serve is asynq as its users run it: the Server calls a handler per task,
// and the handler is the harness's (jobstore.Serving). Claim's path hands
// each task from asynq's goroutine to a claimer and back over channels,
// with a timer a task for the lease; that is what issue 24 measured at
// 0.7-1.1x a plain asynq program. Served, a job costs what it costs a user.

import (
	"context"
	"errors"
	"fmt"
	"time"

	hq "github.com/hibiken/asynq"

	"github.com/aebench/aebench/jobstore"
)

// asynqLease is asynq's own lease on an active task (30 s, renewed by its
// heartbeater while the handler runs); a served job's Claimed shows it.
const asynqLease = 30 * time.Second

// errNotEnded is what a served handler returns to asynq when the harness's
// handler ended the job neither way (its context ended): asynq retries it.
var errNotEnded = errors.New("aebench: the handler ended without Complete or Fail")

// Serve runs asynq's Server with h as the handler until ctx ends or the
// Store closes, then shuts the server down (handlers still running see
// their context end; asynq gives their tasks back).
func (s *Store) Serve(ctx context.Context, h jobstore.ServeFunc) error {
	if err := s.check(); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("%w: asynq: Serve needs a handler", jobstore.ErrInvalid)
	}
	if !s.serving.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: asynq: Serve twice on one Store", jobstore.ErrInvalid)
	}
	if err := s.serve(hq.HandlerFunc(func(tctx context.Context, t *hq.Task) error { return s.serveTask(tctx, t, h) }), true); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-s.closing:
	}
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	srv.Shutdown()
	return nil
}

// serveTask runs h on one task and returns what asynq should do with it.
func (s *Store) serveTask(ctx context.Context, t *hq.Task, h jobstore.ServeFunc) error {
	j, token := taskJob(ctx, t)
	now := s.o.Clock.Now()
	j.StartedAt, j.LastUpdatedAt, j.LeaseToken, j.LeaseDeadline = now, now, token, now.Add(asynqLease)
	end := &servedEnd{s: s, t: t, job: j}
	h(ctx, jobstore.Claimed{Job: j, Lease: jobstore.Lease{JobID: j.ID, Token: token, Deadline: j.LeaseDeadline, Attempt: j.RetryCount}}, end)
	if !end.ended {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errNotEnded
	}
	return end.out.err
}

// servedEnd is the Ender of one served task. It is used by the handler's
// goroutine only, so it needs no lock.
type servedEnd struct {
	s     *Store
	t     *hq.Task
	job   jobstore.Job
	ended bool
	out   outcome
}

func (e *servedEnd) Complete(result []byte) error {
	if e.ended {
		return fmt.Errorf("%w: job %s: already ended", jobstore.ErrLeaseLost, e.job.ID)
	}
	e.ended = true
	if len(result) > 0 {
		if _, err := e.t.ResultWriter().Write(result); err != nil {
			e.out.err = fmt.Errorf("write result: %w", err)
			return fmt.Errorf("asynq: Complete %s: %w", e.job.ID, e.out.err)
		}
	}
	return nil
}

func (e *servedEnd) Fail(reason string) (jobstore.FailResult, error) {
	if e.ended {
		return jobstore.FailResult{}, fmt.Errorf("%w: job %s: already ended", jobstore.ErrLeaseLost, e.job.ID)
	}
	e.ended = true
	out, res := e.s.failOutcome(e.job, reason)
	e.out = out
	return res, nil
}
