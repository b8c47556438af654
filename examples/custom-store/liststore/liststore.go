// Package liststore is a small job store of a user's own, kept outside the
// aebench module, to show how a store is plugged into aebench: it implements
// jobstore.Store on two Redis lists and a hash per job, declares honestly
// what it keeps (Caps), and is registered with the aebench CLI in main.go
// and checked by the conformance suite in liststore_test.go.
//
// Keys (one hash tag per queue, so a Redis Cluster keeps them on one slot):
//
//	{queue}:ls:ready    LIST  ids waiting, pushed on the left, claimed from the right
//	{queue}:ls:active   LIST  ids claimed and not finished
//	{queue}:ls:done     STRING completions; {queue}:ls:dead dead-lettered jobs
//	{queue}:ls:job:<id> HASH  the record: name, payload, status, times, result
//
// It keeps FIFO order and blocks in Redis (BLMOVE) while a claim waits. It
// has no leases (a crashed worker's job stays active), no retries (Fail
// dead-letters), no delayed jobs, no cancel, no duplicate check and no
// atomic batches; it reads the machine's clock. An operation it cannot do
// returns an error wrapping errors.ErrUnsupported.
package liststore

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Caps is what the store declares: the conformance suite skips the cases
// that need anything else, and aebench runs it only in scenarios that need
// nothing else.
func Caps() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapStrictFIFO: true, jobstore.CapBlockingClaim: true}
}

// Limits says what the store does not guarantee (aebench list prints it).
const Limits = "no leases or recovery, no retries (Fail dead-letters), no delayed jobs, no cancel, " +
	"no duplicate-id check, enqueue not atomic across jobs, machine clock, hash records only"

// Store is one queue.
type Store struct {
	c                    rclient.Client
	o                    jobstore.Options
	prefix               string
	ready, active        string
	doneCount, deadCount string
}

var _ jobstore.Store = (*Store)(nil)

// New builds the store; it writes nothing to Redis until the first job.
func New(_ context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	// Records are hashes whatever Options.Encoding says: the store does not
	// declare record-encodings, so nothing expects it to honour it.
	if c == nil {
		return nil, fmt.Errorf("%w: liststore: no Redis client", jobstore.ErrInvalid)
	}
	p := "{" + o.Queue + "}:ls:"
	return &Store{c: c, o: o, prefix: p, ready: p + "ready", active: p + "active", doneCount: p + "done", deadCount: p + "dead"}, nil
}

func (s *Store) jobKey(id string) string { return s.prefix + "job:" + id }

// Capabilities returns Caps.
func (s *Store) Capabilities() jobstore.Capabilities { return Caps() }

// Close holds nothing to release: the Redis client is the caller's.
func (s *Store) Close() error { return nil }

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// Enqueue writes each job's record and pushes its id, one pipeline per job.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	// The contract's input rules, in its own words (empty batch, ids,
	// MaxRetries, payload size); then this store's own limit.
	if err := jobstore.CheckBatch(jobs, s.o); err != nil {
		return err
	}
	now := time.Now()
	for _, j := range jobs {
		switch {
		case j.RunAt.After(now):
			return fmt.Errorf("liststore: job %q has a RunAt after now: no delayed jobs: %w", j.ID, errors.ErrUnsupported)
		}
	}
	for _, j := range jobs {
		var maps [3]string
		for i, m := range []any{j.Headers, j.RouteParams, j.QueryParams} {
			b, err := json.Marshal(m)
			if err != nil {
				return fmt.Errorf("%w: job %q: %v", jobstore.ErrInvalid, j.ID, err)
			}
			maps[i] = string(b)
		}
		hset := rclient.Cmd("HSET", s.jobKey(j.ID), "name", j.Name, "payload", string(j.Payload), "status", st(jobstore.StatusQueued),
			"max_retries", strconv.Itoa(j.MaxRetries), "created_at", ms(now), "updated_at", ms(now),
			"headers", maps[0], "route", maps[1], "query", maps[2])
		for _, r := range s.c.DoMulti(ctx, hset, rclient.Cmd("LPUSH", s.ready, j.ID)) {
			if r.Err != nil {
				return fmt.Errorf("liststore: enqueue %q: %w", j.ID, r.Err)
			}
		}
	}
	return nil
}

// Claim moves up to req.Max ids from ready to active: the first with BLMOVE
// when req.Wait > 0, the others with LMOVE while any wait.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var out []jobstore.Claimed
	for len(out) < req.Max {
		var v any
		var err error
		if len(out) == 0 && req.Wait > 0 {
			secs := strconv.FormatFloat(max(req.Wait, time.Millisecond).Seconds(), 'f', 3, 64)
			v, err = s.c.DoBlocking(ctx, rclient.Command{Head: []string{"BLMOVE"}, Keys: []string{s.ready, s.active}, Args: []string{"RIGHT", "LEFT", secs}})
		} else {
			v, err = s.c.Do(ctx, rclient.Command{Head: []string{"LMOVE"}, Keys: []string{s.ready, s.active}, Args: []string{"RIGHT", "LEFT"}})
		}
		if err != nil {
			return out, fmt.Errorf("liststore: claim: %w", err)
		}
		id, ok := v.(string)
		if !ok {
			break // nothing waiting
		}
		c, err := s.start(ctx, id, req)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// start marks a claimed job in progress and returns its record.
func (s *Store) start(ctx context.Context, id string, req jobstore.ClaimRequest) (jobstore.Claimed, error) {
	now := time.Now().Truncate(time.Millisecond) // the record keeps milliseconds
	// The token only names the claim: nothing checks it (no fencing).
	token, deadline := id+"@"+ms(now), now.Add(req.Lease)
	rs := s.c.DoMulti(ctx, rclient.Cmd("HSET", s.jobKey(id), "status", st(jobstore.StatusInProgress), "worker", req.WorkerID,
		"started_at", ms(now), "updated_at", ms(now), "token", token, "deadline", ms(deadline)), rclient.Cmd("HGETALL", s.jobKey(id)))
	for _, r := range rs {
		if r.Err != nil {
			return jobstore.Claimed{}, fmt.Errorf("liststore: start %q: %w", id, r.Err)
		}
	}
	j := decode(id, rs[1].Val)
	return jobstore.Claimed{Job: j, Lease: jobstore.Lease{JobID: id, Token: token, Deadline: deadline}}, nil
}

// finishSrc removes an active job and writes its outcome in one step, so a
// call cut off midway (Redis unreachable) leaves the job either active or
// finished, never removed without its outcome.
//
//go:embed finish.lua
var finishSrc string

var finishScript = rclient.NewScript("liststore-finish", finishSrc)

// finish removes an active job and records its outcome; a job no longer
// active (finished already) is ErrLeaseLost.
func (s *Store) finish(ctx context.Context, l jobstore.Lease, counter string, fields ...string) error {
	if l.JobID == "" || l.Token == "" {
		return fmt.Errorf("%w: Lease: JobID and Token must be set (use the Lease Claim returned)", jobstore.ErrInvalid)
	}
	now := ms(time.Now())
	args := append([]string{l.JobID}, append(fields, "updated_at", now, "completed_at", now)...)
	v, err := s.c.Run(ctx, finishScript, []string{s.active, s.jobKey(l.JobID), counter}, args)
	if err != nil {
		return fmt.Errorf("liststore: finish %q: %w", l.JobID, err)
	}
	if n, _ := v.(int64); n == 0 {
		return fmt.Errorf("%w: job %s is not active", jobstore.ErrLeaseLost, l.JobID)
	}
	return nil
}

// Complete records the result.
func (s *Store) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.finish(ctx, l, s.doneCount, "status", st(jobstore.StatusCompleted), "result", string(result))
}

// Fail dead-letters the job: the store keeps no retries.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	if err := s.finish(ctx, l, s.deadCount, "status", st(jobstore.StatusFailed), "error", reason); err != nil {
		return jobstore.FailResult{}, err
	}
	return jobstore.FailResult{Status: jobstore.StatusFailed}, nil
}

// Extend is unsupported: there are no leases to renew.
func (s *Store) Extend(context.Context, jobstore.Lease, time.Duration) (jobstore.Lease, error) {
	return jobstore.Lease{}, fmt.Errorf("liststore: Extend: no leases: %w", errors.ErrUnsupported)
}

// Recover is unsupported: there are no leases to expire.
func (s *Store) Recover(context.Context, int) (jobstore.RecoverResult, error) {
	return jobstore.RecoverResult{}, fmt.Errorf("liststore: Recover: no leases: %w", errors.ErrUnsupported)
}

// Cancel is unsupported.
func (s *Store) Cancel(_ context.Context, id string) error {
	return fmt.Errorf("%w: %q: liststore has no cancel", jobstore.ErrNotCancelable, id)
}

// Get reads the record.
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	if id == "" {
		return jobstore.Job{}, fmt.Errorf("%w: Get: id must not be empty", jobstore.ErrInvalid)
	}
	v, err := s.c.Do(ctx, rclient.Cmd("HGETALL", s.jobKey(id)))
	if err != nil {
		return jobstore.Job{}, fmt.Errorf("liststore: get %q: %w", id, err)
	}
	if m := pairs(v); len(m) == 0 {
		return jobstore.Job{}, fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
	}
	return decode(id, v), nil
}

// Stats counts the lists and the counters.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	rs := s.c.DoMulti(ctx, rclient.Cmd("LLEN", s.ready), rclient.Cmd("LLEN", s.active),
		rclient.Cmd("GET", s.doneCount), rclient.Cmd("GET", s.deadCount))
	var n [4]int64
	for i, r := range rs {
		if r.Err != nil {
			return jobstore.Stats{}, fmt.Errorf("liststore: stats: %w", r.Err)
		}
		n[i] = toInt(r.Val)
	}
	return jobstore.Stats{Due: n[0], InProgress: n[1], Completed: n[2], Dead: n[3]}, nil
}
