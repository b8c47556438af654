package zset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/record"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptCjCreate = base.NewScript("cj_create")
	scriptCjCas    = base.NewScript("cj_cas")
)

// Option record_io: where a job record is read and written.
const (
	OptionRecordIO = "record_io"
	// RecordIOScript: inside the store's Lua scripts (the corrected store).
	RecordIOScript = "script"
	// RecordIOClient: by the client, as one JSON string (ClientJSON).
	RecordIOClient = "client"
)

// ClientJSON is the job store seed 001 sets out to replace: AsyncEndpoints'
// JSON RedisJobStore, where a job record is one JSON string that travels to
// the client and back. Every update reads the record (GET), decodes it in
// Go, changes it, encodes it and writes it back with a compare-and-set
// (cj_cas.lua: the SET happens only if the record still holds the JSON
// read, as AsyncEndpoints' transaction condition does), together with the
// index change the operation needs. It exists so that the seed's claim,
// "hashes are cheaper than JSON strings" (fewer bytes on the wire, faster
// updates), is measured against the JSON store the seed had, not only
// against a JSON store that decodes inside Lua.
//
// Its keys and indexes are the sorted-set store's (queue ZSET scored by
// RunAt, active index, dead ZSET, completed counter), with the job's bare
// id as the queue member, as AsyncEndpoints keeps it (so jobs of equal
// RunAt are claimed in id order: no strict FIFO). It is a complete job
// store: leases are fenced by the CAS (a worker whose job was recovered
// holds a stale record and its write fails) and by the token, claims poll
// every Options.PollInterval. Per claimed job: one ZRANGE for the
// candidates, a GET and a CAS; per Complete, Fail or Extend: a GET and a
// CAS; so the record crosses the wire three times per update (out once,
// in twice), where the hash store's scripts move only the fields asked.
type ClientJSON struct{ *Store }

var (
	_ jobstore.Store   = (*ClientJSON)(nil)
	_ jobstore.Locator = (*ClientJSON)(nil)
)

// newClientJSON builds the store; records are JSON whatever o.Encoding says.
func newClientJSON(ctx context.Context, c rclient.Client, o jobstore.Options) (*ClientJSON, error) {
	o.Encoding = jobstore.EncodingJSON
	s, err := NewWith(ctx, c, o, Config{Poll: true})
	if err != nil {
		return nil, err
	}
	return &ClientJSON{Store: s}, nil
}

// Capabilities: a job store without strict FIFO, whose claims poll, and
// whose records are JSON whatever Options.Encoding says (so payloads must
// be UTF-8).
func (s *ClientJSON) Capabilities() jobstore.Capabilities {
	cs := jobstore.Capabilities{jobstore.CapNativeDelay: true, jobstore.CapStoreClockLeases: true,
		jobstore.CapExactStats: true, jobstore.CapBatchComplete: true}.WithCore()
	delete(cs, jobstore.CapRecordEncodings)
	return cs
}

// cjRecord is a record as the client holds it: the flat JSON object of
// strings that every JSON-encoded store writes (base's rec_json.lua).
type cjRecord map[string]string

func (r cjRecord) encode() (string, error) {
	b, err := json.Marshal(map[string]string(r))
	return string(b), err
}

// Enqueue encodes each record in the client and stores the batch in one
// call, all or none (cj_create.lua).
func (s *ClientJSON) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := s.Check(); err != nil {
		return err
	}
	now := s.Now()
	keys, layout, _, err := s.EnqueueArgs(now, jobs)
	if err != nil {
		return err
	}
	// layout is read_new_jobs': n, then per job id, runAt, payload, npairs,
	// pairs (validated and built once, by EnqueueArgs).
	args := make([]string, 0, 3*len(jobs))
	for at := 1; at < len(layout); {
		id, runAt, payload := layout[at], layout[at+1], layout[at+2]
		np, _ := strconv.Atoi(layout[at+3])
		pairs := layout[at+4 : at+4+2*np]
		at += 4 + 2*np
		r := make(cjRecord, np+4)
		r["Status"], r["Ref"], r["RunAt"] = strconv.Itoa(int(jobstore.StatusQueued)), id, runAt
		if payload != "" {
			r["Payload"] = payload
		}
		for k := 0; k+1 < len(pairs); k += 2 {
			r[pairs[k]] = pairs[k+1]
		}
		text, err := r.encode()
		if err != nil {
			return fmt.Errorf("zset client-json: %w", err)
		}
		args = append(args, id, runAt, text)
	}
	_, err = s.Run(ctx, scriptCjCreate, append([]string{s.queue}, keys...), args)
	return err
}

// read GETs and decodes a record: its text, the record, or ErrNotFound.
func (s *ClientJSON) read(ctx context.Context, id string) (string, cjRecord, error) {
	v, err := s.C.Do(ctx, rclient.Cmd("GET", s.Keys.Job(id)))
	if err != nil {
		return "", nil, fmt.Errorf("zset client-json: read %s: %w", id, err)
	}
	text, ok := v.(string)
	if !ok {
		return "", nil, fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
	}
	var r cjRecord
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return "", nil, fmt.Errorf("zset client-json: record %s: %w", id, err)
	}
	return text, r, nil
}

// cas writes r back over old with op's index change; false: the record
// changed since it was read.
func (s *ClientJSON) cas(ctx context.Context, id, old string, r cjRecord, op string, args ...string) (bool, error) {
	_, ok, err := s.casText(ctx, id, old, r, op, args...)
	return ok, err
}

// casText is cas that also returns the JSON it wrote (a claim decodes the
// job it returns from it, not from a second encoding).
func (s *ClientJSON) casText(ctx context.Context, id, old string, r cjRecord, op string, args ...string) (string, bool, error) {
	text, err := r.encode()
	if err != nil {
		return "", false, fmt.Errorf("zset client-json: %w", err)
	}
	v, err := s.Run(ctx, scriptCjCas, []string{s.Keys.Job(id), s.queue, s.Keys.Active(), s.Keys.Dead(), s.Keys.Completed()},
		append([]string{old, text, op, id}, args...))
	if err != nil {
		return "", false, fmt.Errorf("zset client-json: %s %s: %w", op, id, err)
	}
	return text, base.Int(v) == 1, nil
}

// Claim reads the due head outside Lua, then claims each candidate with a
// GET and a CAS, polling while req.Wait allows.
func (s *ClientJSON) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.WaitClaim(ctx, req, nil, func(now, deadline time.Time, _ base.Handoff) ([]jobstore.Claimed, time.Time, error) {
		v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{s.queue},
			Args: []string{"-inf", base.Ms(now), "BYSCORE", "LIMIT", "0", strconv.Itoa(req.Max)}})
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("zset client-json: read head: %w", err)
		}
		var got []jobstore.Claimed
		for i, id := range base.Strings(v) {
			old, r, err := s.read(ctx, id)
			if errors.Is(err, jobstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return got, time.Time{}, err
			}
			if st := r["Status"]; st != strconv.Itoa(int(jobstore.StatusQueued)) && st != strconv.Itoa(int(jobstore.StatusScheduled)) {
				continue
			}
			token := s.TokenBase() + "." + strconv.Itoa(i)
			ms := base.Ms(now)
			r["Status"], r["WorkerId"], r["StartedAt"], r["LastUpdatedAt"] = strconv.Itoa(int(jobstore.StatusInProgress)), req.WorkerID, ms, ms
			r["LeaseToken"], r["LeaseDeadline"] = token, base.Ms(deadline)
			text, ok, err := s.casText(ctx, id, old, r, "claim", token, base.Ms(deadline))
			if err != nil {
				return got, time.Time{}, err
			}
			if !ok {
				continue // another claimer changed it first
			}
			j, err := record.DecodeOf(id, text)
			if err != nil {
				return got, time.Time{}, err
			}
			got = append(got, jobstore.Claimed{Job: j, Lease: jobstore.Lease{JobID: id, Token: token, Deadline: deadline, Attempt: j.RetryCount}})
		}
		return got, time.Time{}, nil
	})
}

// held reads a record and checks that l still holds it.
func (s *ClientJSON) held(ctx context.Context, l jobstore.Lease) (string, cjRecord, error) {
	if err := base.ValidateLease(l); err != nil {
		return "", nil, err
	}
	if err := s.Check(); err != nil {
		return "", nil, err
	}
	old, r, err := s.read(ctx, l.JobID)
	if err != nil {
		return "", nil, err
	}
	if r["LeaseToken"] != l.Token || r["Status"] != strconv.Itoa(int(jobstore.StatusInProgress)) {
		return "", nil, fmt.Errorf("%w: %q", jobstore.ErrLeaseLost, l.JobID)
	}
	return old, r, nil
}

// lost maps a failed CAS on a held record: it changed under the caller.
func lost(ok bool, err error, id string) error {
	if err == nil && !ok {
		return fmt.Errorf("%w: %q", jobstore.ErrLeaseLost, id)
	}
	return err
}

// Extend moves the lease's deadline.
func (s *ClientJSON) Extend(ctx context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	old, r, err := s.held(ctx, l)
	if err != nil {
		return l, err
	}
	now := s.Now()
	l.Deadline = now.Add(d).Truncate(time.Millisecond)
	r["LeaseDeadline"], r["LastUpdatedAt"] = base.Ms(l.Deadline), base.Ms(now)
	ok, err := s.cas(ctx, l.JobID, old, r, "extend", l.Token, base.Ms(l.Deadline))
	return l, lost(ok, err, l.JobID)
}

// Complete marks the job Completed with its result.
func (s *ClientJSON) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	old, r, err := s.held(ctx, l)
	if err != nil {
		return err
	}
	ms := base.Ms(s.Now())
	r["Status"], r["Result"], r["CompletedAt"], r["LastUpdatedAt"] = strconv.Itoa(int(jobstore.StatusCompleted)), string(result), ms, ms
	ok, err := s.cas(ctx, l.JobID, old, r, "complete", l.Token, strconv.FormatInt(s.Opts.Retention.Milliseconds(), 10))
	return lost(ok, err, l.JobID)
}

// CompleteMany completes each lease as Complete does.
func (s *ClientJSON) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return base.CompleteEach(ctx, cs, s.Complete)
}

// Fail retries with backoff or dead-letters.
func (s *ClientJSON) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	old, r, err := s.held(ctx, l)
	if err != nil {
		return jobstore.FailResult{}, err
	}
	now := s.Now()
	res, op, args := s.failed(r, reason, now, s.RetryAt(now, l.Attempt).Truncate(time.Millisecond))
	ok, err := s.cas(ctx, l.JobID, old, r, op, append([]string{l.Token}, args...)...)
	return res, lost(ok, err, l.JobID)
}

// failed changes r for a failure at now (a retry at runAt while retries
// remain, else dead-lettered) and returns the outcome and the CAS op.
func (s *ClientJSON) failed(r cjRecord, reason string, now, runAt time.Time) (jobstore.FailResult, string, []string) {
	rc, _ := strconv.Atoi(r["RetryCount"])
	maxR, _ := strconv.Atoi(r["MaxRetries"])
	ms := base.Ms(now)
	r["Error"], r["LastUpdatedAt"] = reason, ms
	if rc < maxR {
		r["Status"], r["RetryCount"], r["RunAt"], r["RetryDelayUntil"], r["WorkerId"] =
			strconv.Itoa(int(jobstore.StatusScheduled)), strconv.Itoa(rc+1), base.Ms(runAt), base.Ms(runAt), ""
		return jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: runAt}, "retry", []string{base.Ms(runAt)}
	}
	r["Status"], r["CompletedAt"] = strconv.Itoa(int(jobstore.StatusFailed)), ms
	return jobstore.FailResult{Status: jobstore.StatusFailed, RunAt: now}, "dead",
		[]string{ms, strconv.FormatInt(s.Opts.Retention.Milliseconds(), 10)}
}

// Recover reads expired leases from the active index and takes each job
// back with a GET and a CAS: due now with RetryCount+1, or dead-lettered.
func (s *ClientJSON) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	var res jobstore.RecoverResult
	if err := jobstore.CheckMax("Recover", max); err != nil {
		return res, err
	}
	if err := s.Check(); err != nil {
		return res, err
	}
	now := s.Now()
	v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{s.Keys.Active()},
		Args: []string{"-inf", base.Ms(now), "BYSCORE", "LIMIT", "0", strconv.Itoa(max)}})
	if err != nil {
		return res, fmt.Errorf("zset client-json: recover: %w", err)
	}
	for _, m := range base.Strings(v) {
		id, token := base.SplitLeaseMember(m)
		old, r, err := s.read(ctx, id)
		if errors.Is(err, jobstore.ErrNotFound) {
			_, _ = s.C.Do(ctx, rclient.Cmd("ZREM", s.Keys.Active(), m))
			continue
		}
		if err != nil {
			return res, err
		}
		if r["LeaseToken"] != token || r["Status"] != strconv.Itoa(int(jobstore.StatusInProgress)) {
			continue // finished, or recovered by another recoverer meanwhile
		}
		fr, op, args := s.failed(r, "lease expired", now, now.Truncate(time.Millisecond))
		ok, err := s.cas(ctx, id, old, r, op, append([]string{token}, args...)...)
		if err != nil {
			return res, err
		}
		switch {
		case !ok:
		case fr.Status == jobstore.StatusScheduled:
			res.Requeued = append(res.Requeued, id)
		default:
			res.DeadLettered = append(res.DeadLettered, id)
		}
	}
	return res, nil
}

// Cancel cancels a waiting job.
func (s *ClientJSON) Cancel(ctx context.Context, id string) error {
	if err := s.Check(); err != nil {
		return err
	}
	old, r, err := s.read(ctx, id)
	if err != nil {
		return err
	}
	if st := r["Status"]; st != strconv.Itoa(int(jobstore.StatusQueued)) && st != strconv.Itoa(int(jobstore.StatusScheduled)) {
		return fmt.Errorf("%w: %q status %s", jobstore.ErrNotCancelable, id, st)
	}
	ms := base.Ms(s.Now())
	r["Status"], r["CompletedAt"], r["LastUpdatedAt"] = strconv.Itoa(int(jobstore.StatusCanceled)), ms, ms
	ok, err := s.cas(ctx, id, old, r, "cancel", strconv.FormatInt(s.Opts.Retention.Milliseconds(), 10))
	if err == nil && !ok {
		return fmt.Errorf("%w: %q changed while canceling", jobstore.ErrNotCancelable, id)
	}
	return err
}
