package conformance_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// listStore is a store that keeps only a sliver of the contract, to check
// that the suite's capability gating is complete: a store declaring no core
// capability must pass every case it runs. It is a list queue in the manner
// of a reference floor: a JSON record per job and RPUSH at enqueue, LMOVE
// into a processing list at claim, LREM at completion; no leases, fencing,
// retries, delayed jobs, cancel, duplicate checks, atomic batches,
// retention or encodings, and times from the real clock, not Options.Clock.
// It declares strict FIFO, which it keeps.
type listStore struct {
	c                    rclient.Client
	o                    jobstore.Options
	ready, active        string
	doneCount, deadCount string
}

func newListStore(_ context.Context, c rclient.Client, o jobstore.Options) (*listStore, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	k := func(s string) string { return "{" + o.Queue + "}:" + s }
	return &listStore{c: c, o: o, ready: k("ready"), active: k("active"), doneCount: k("done"), deadCount: k("dead")}, nil
}

func (s *listStore) key(id string) string { return "{" + s.o.Queue + "}:job:" + id }

func (s *listStore) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapStrictFIFO: true}
}

func (s *listStore) Close() error { return nil }

func (s *listStore) check(nj jobstore.NewJob) error {
	switch {
	case nj.ID == "":
		return fmt.Errorf("%w: NewJob.ID: must not be empty", jobstore.ErrInvalid)
	case nj.MaxRetries < 0:
		return fmt.Errorf("%w: NewJob.MaxRetries %d: must be >= 0", jobstore.ErrInvalid, nj.MaxRetries)
	case len(nj.Payload) > s.o.MaxPayload:
		return fmt.Errorf("%w: NewJob.Payload: %d bytes, over Options.MaxPayload %d", jobstore.ErrInvalid, len(nj.Payload), s.o.MaxPayload)
	}
	return nil
}

// Enqueue writes the jobs one after the other: not atomic, no duplicate check.
func (s *listStore) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	for _, nj := range jobs {
		if err := s.check(nj); err != nil {
			return err
		}
		now := time.Now()
		j := jobstore.Job{ID: nj.ID, Name: nj.Name, Status: jobstore.StatusQueued, Headers: nj.Headers,
			RouteParams: nj.RouteParams, QueryParams: nj.QueryParams, Payload: nj.Payload, MaxRetries: nj.MaxRetries,
			CreatedAt: now, LastUpdatedAt: now, RunAt: nj.RunAt}
		rec, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("liststore: encode %q: %w", nj.ID, err)
		}
		for _, r := range s.c.DoMulti(ctx, rclient.Cmd("SET", s.key(nj.ID), string(rec)), rclient.Cmd("RPUSH", s.ready, nj.ID)) {
			if r.Err != nil {
				return fmt.Errorf("liststore: enqueue %q: %w", nj.ID, r.Err)
			}
		}
	}
	return nil
}

// Claim moves up to Max ids into the processing list, polling while Wait lasts.
func (s *listStore) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	switch {
	case req.Max <= 0:
		return nil, fmt.Errorf("%w: ClaimRequest.Max %d: must be > 0", jobstore.ErrInvalid, req.Max)
	case req.Lease <= 0:
		return nil, fmt.Errorf("%w: ClaimRequest.Lease %v: must be > 0", jobstore.ErrInvalid, req.Lease)
	}
	until := time.Now().Add(req.Wait)
	for {
		out, err := s.claimOnce(ctx, req)
		if err != nil || len(out) > 0 || !time.Now().Before(until) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(s.o.PollInterval, time.Until(until))):
		}
	}
}

func (s *listStore) claimOnce(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	var out []jobstore.Claimed
	for range req.Max {
		v, err := s.c.Do(ctx, rclient.Command{Head: []string{"LMOVE"}, Keys: []string{s.ready, s.active}, Args: []string{"LEFT", "RIGHT"}})
		if err != nil {
			return out, fmt.Errorf("liststore: LMOVE: %w", err)
		}
		id, ok := v.(string)
		if !ok {
			return out, nil
		}
		j, err := s.Get(ctx, id)
		if err != nil {
			return out, err
		}
		now := time.Now()
		token := make([]byte, 8)
		_, _ = rand.Read(token)
		j.Status, j.WorkerID, j.StartedAt, j.LastUpdatedAt = jobstore.StatusInProgress, req.WorkerID, now, now
		j.LeaseToken, j.LeaseDeadline = hex.EncodeToString(token), now.Add(req.Lease)
		if err := s.put(ctx, j); err != nil {
			return out, err
		}
		out = append(out, jobstore.Claimed{Job: j, Lease: jobstore.Lease{JobID: id, Token: j.LeaseToken, Deadline: j.LeaseDeadline}})
	}
	return out, nil
}

func (s *listStore) put(ctx context.Context, j jobstore.Job) error {
	rec, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("liststore: encode %q: %w", j.ID, err)
	}
	if _, err := s.c.Do(ctx, rclient.Cmd("SET", s.key(j.ID), string(rec))); err != nil {
		return fmt.Errorf("liststore: write %q: %w", j.ID, err)
	}
	return nil
}

// finish ends a claim without looking at its token: no fencing.
func (s *listStore) finish(ctx context.Context, l jobstore.Lease, set func(*jobstore.Job), counter string) error {
	j, err := s.Get(ctx, l.JobID)
	if err != nil {
		return err
	}
	set(&j)
	j.LastUpdatedAt = time.Now()
	if err := s.put(ctx, j); err != nil {
		return err
	}
	for _, r := range s.c.DoMulti(ctx, rclient.Cmd("LREM", s.active, "1", l.JobID), rclient.Cmd("INCR", counter)) {
		if r.Err != nil {
			return fmt.Errorf("liststore: finish %q: %w", l.JobID, r.Err)
		}
	}
	return nil
}

func (s *listStore) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.finish(ctx, l, func(j *jobstore.Job) {
		j.Status, j.Result, j.CompletedAt = jobstore.StatusCompleted, result, time.Now()
	}, s.doneCount)
}

// Fail dead-letters at once: no retries.
func (s *listStore) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	err := s.finish(ctx, l, func(j *jobstore.Job) { j.Status, j.Error = jobstore.StatusFailed, reason }, s.deadCount)
	return jobstore.FailResult{Status: jobstore.StatusFailed}, err
}

var errNoLeases = errors.New("liststore: no leases (lease-recovery not declared)")

func (s *listStore) Extend(context.Context, jobstore.Lease, time.Duration) (jobstore.Lease, error) {
	return jobstore.Lease{}, errNoLeases
}

func (s *listStore) Recover(context.Context, int) (jobstore.RecoverResult, error) {
	return jobstore.RecoverResult{}, nil
}

func (s *listStore) Cancel(_ context.Context, id string) error {
	return fmt.Errorf("%w: %q: this store has no cancel", jobstore.ErrNotCancelable, id)
}

func (s *listStore) Get(ctx context.Context, id string) (jobstore.Job, error) {
	if id == "" {
		return jobstore.Job{}, fmt.Errorf("%w: Get: ID must not be empty", jobstore.ErrInvalid)
	}
	v, err := s.c.Do(ctx, rclient.Cmd("GET", s.key(id)))
	if err != nil {
		return jobstore.Job{}, fmt.Errorf("liststore: read %q: %w", id, err)
	}
	rec, ok := v.(string)
	if !ok {
		return jobstore.Job{}, fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
	}
	var j jobstore.Job
	if err := json.Unmarshal([]byte(rec), &j); err != nil {
		return jobstore.Job{}, fmt.Errorf("liststore: decode %q: %w", id, err)
	}
	return j, nil
}

func (s *listStore) Stats(ctx context.Context) (jobstore.Stats, error) {
	rs := s.c.DoMulti(ctx, rclient.Cmd("LLEN", s.ready), rclient.Cmd("LLEN", s.active),
		rclient.Cmd("GET", s.doneCount), rclient.Cmd("GET", s.deadCount))
	var n [4]int64
	for i, r := range rs {
		if r.Err != nil {
			return jobstore.Stats{}, fmt.Errorf("liststore: stats: %w", r.Err)
		}
		switch v := r.Val.(type) {
		case int64:
			n[i] = v
		case string:
			n[i], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return jobstore.Stats{Due: n[0], InProgress: n[1], Completed: n[2], Dead: n[3]}, nil
}
