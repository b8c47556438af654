package base

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// The operations below are the same for every backend; a backend passes what
// differs (its own script and its own keys) and keeps only the strategy.

// Extend is the heartbeat (shared extend script).
func (c *Core) Extend(ctx context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	if err := ValidateLease(l); err != nil {
		return l, err
	}
	if d <= 0 {
		return l, fmt.Errorf("%w: Extend duration %v: must be positive", jobstore.ErrInvalid, d)
	}
	if err := c.Check(); err != nil {
		return l, err
	}
	now := c.Now()
	deadline := now.Add(d)
	if _, err := c.Run(ctx, ScriptExtend, []string{c.Keys.Active(), c.Keys.Job(l.JobID)},
		[]string{l.JobID, l.Token, Ms(now), Ms(deadline)}); err != nil {
		return l, err
	}
	l.Deadline = deadline.Truncate(time.Millisecond)
	return l, nil
}

// Complete runs the shared complete script, which derives the counter's
// and the record's keys from the active index's.
func (c *Core) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	if err := ValidateLease(l); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	_, err := c.Run(ctx, ScriptComplete, []string{c.Keys.Active()},
		[]string{l.JobID, l.Token, Ms(c.Now()), string(result), c.retentionMs()})
	return err
}

// CompleteWith runs script with KEYS active, completed, record, extraKeys...
// and ARGV id, token, now, result, retention ms: the seed variants' bodies,
// which read their keys from KEYS.
func (c *Core) CompleteWith(ctx context.Context, script Script, l jobstore.Lease, result []byte, extraKeys []string) error {
	if err := ValidateLease(l); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	keys := append([]string{c.Keys.Active(), c.Keys.Completed(), c.Keys.Job(l.JobID)}, extraKeys...)
	_, err := c.Run(ctx, script, keys, []string{l.JobID, l.Token, Ms(c.Now()), string(result), c.retentionMs()})
	return err
}

// CompleteMany completes leases with the shared complete_many script.
func (c *Core) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return c.CompleteManyWith(ctx, ScriptCompleteMany, cs, nil)
}

// CompleteManyWith runs script (lib.lua's complete_many in a body) with KEYS
// active, completed, extraKeys... (the records' keys are derived in the
// script), and ARGV now,
// retention ms, "1" or "0" (results follow or not: all empty), then per
// lease its member "<id>|<token>", its id (and its result), MaxClaim
// leases per call.
// An invalid lease gets its ErrInvalid error and is not sent.
func (c *Core) CompleteManyWith(ctx context.Context, script Script, cs []jobstore.Completion, extraKeys []string) ([]error, error) {
	errs := make([]error, len(cs))
	if err := c.Check(); err != nil {
		return errs, err
	}
	fixed := append([]string{c.Keys.Active(), c.Keys.Completed()}, extraKeys...)
	for start := 0; start < len(cs); start += MaxClaim {
		chunk := cs[start:min(start+MaxClaim, len(cs))]
		keys := fixed
		withResults := "0"
		for _, x := range chunk {
			if len(x.Result) > 0 {
				withResults = "1"
			}
		}
		args := append(make([]string, 0, 3+3*len(chunk)), Ms(c.Now()), c.retentionMs(), withResults)
		sent := make([]int, 0, len(chunk)) // index in cs of each lease sent
		seen := make(map[jobstore.Lease]bool, len(chunk))
		for i, x := range chunk {
			if err := ValidateLease(x.Lease); err != nil {
				errs[start+i] = err
				continue
			}
			// A lease given twice completes once (the script takes each
			// lease once): the repeat is answered here, as lost.
			l := jobstore.Lease{JobID: x.Lease.JobID, Token: x.Lease.Token}
			if seen[l] {
				errs[start+i] = fmt.Errorf("%w: %s (given twice in one CompleteMany)", jobstore.ErrLeaseLost, l.JobID)
				continue
			}
			seen[l] = true
			args = append(args, x.Lease.JobID+"|"+x.Lease.Token, x.Lease.JobID)
			if withResults == "1" {
				args = append(args, string(x.Result))
			}
			sent = append(sent, start+i)
		}
		if len(sent) == 0 {
			continue
		}
		v, err := c.Run(ctx, script, keys, args)
		if err != nil {
			return errs, err
		}
		res, _ := v.(string)
		if len(res) != len(sent) {
			return errs, fmt.Errorf("%s: %d replies for %d leases", script, len(res), len(sent))
		}
		for k, i := range sent {
			if res[k] != '1' {
				errs[i] = fmt.Errorf("%w: %s", jobstore.ErrLeaseLost, cs[i].Lease.JobID)
			}
		}
	}
	return errs, nil
}

func (c *Core) retentionMs() string { return strconv.FormatInt(c.Opts.Retention.Milliseconds(), 10) }

// FailWith runs a backend's fail script: KEYS active, dead, record, then
// placeKeys(runAt) (where a retry at runAt goes); ARGV id, token, now,
// reason, runAt, retention ms. The script calls lib.lua's fail_job.
func (c *Core) FailWith(ctx context.Context, script Script, l jobstore.Lease, reason string, placeKeys func(runAt time.Time) []string) (jobstore.FailResult, error) {
	if err := ValidateLease(l); err != nil {
		return jobstore.FailResult{}, err
	}
	if err := c.Check(); err != nil {
		return jobstore.FailResult{}, err
	}
	now := c.Now()
	runAt := c.RetryAt(now, l.Attempt).Truncate(time.Millisecond)
	keys := append([]string{c.Keys.Active(), c.Keys.Dead(), c.Keys.Job(l.JobID)}, placeKeys(runAt)...)
	v, err := c.Run(ctx, script, keys, []string{l.JobID, l.Token, Ms(now), reason, Ms(runAt), c.retentionMs()})
	if err != nil {
		return jobstore.FailResult{}, err
	}
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return jobstore.FailResult{}, fmt.Errorf("fail %q: unexpected reply %v", l.JobID, v)
	}
	return jobstore.FailResult{Status: jobstore.Status(Int(arr[0])), RunAt: time.UnixMilli(Int(arr[1]))}, nil
}

// RecoverWith first deletes up to max records past their time in the
// expiry index (ScriptExpire), then reads up to max expired lease members from the active index
// (a plain read: the script re-checks each one), then runs a backend's
// recover script: KEYS active, dead, placeKeys(now)..., then one record key
// per member; ARGV now, retention ms, nPlaceKeys, members... The script
// calls lib.lua's recover_leases.
func (c *Core) RecoverWith(ctx context.Context, script Script, max int, placeKeys []string) (jobstore.RecoverResult, error) {
	var res jobstore.RecoverResult
	if err := jobstore.CheckMax("Recover", max); err != nil {
		return res, err
	}
	if err := c.Check(); err != nil {
		return res, err
	}
	now := c.Now()
	if err := c.SweepExpired(ctx, now, max); err != nil {
		return res, err
	}
	v, err := c.C.Do(ctx, rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{c.Keys.Active()},
		Args: []string{"-inf", Ms(now), "BYSCORE", "LIMIT", "0", strconv.Itoa(max)}})
	if err != nil {
		return res, fmt.Errorf("recover: read expired leases: %w", err)
	}
	members := Strings(v)
	if len(members) == 0 {
		return res, nil
	}
	keys := append([]string{c.Keys.Active(), c.Keys.Dead()}, placeKeys...)
	args := append(make([]string, 0, 3+len(members)), Ms(now), c.retentionMs(), strconv.Itoa(len(placeKeys)))
	for _, m := range members {
		id, _ := SplitLeaseMember(m)
		keys = append(keys, c.Keys.Job(id))
		args = append(args, m)
	}
	v, err = c.Run(ctx, script, keys, args)
	if err != nil {
		return res, err
	}
	arr, _ := v.([]any)
	if len(arr) >= 2 {
		res.Requeued, res.DeadLettered = Strings(arr[0]), Strings(arr[1])
	}
	if len(arr) >= 3 {
		res.Returned = Strings(arr[2])
	}
	return res, nil
}

// SweepExpired deletes up to max records CompleteMany finished whose time
// in the expiry index (Keys.Expire) is at or before now. Every Recover runs
// it, a seed variant's own Recover too: it is what reaches a queue where no
// batch completes any more.
func (c *Core) SweepExpired(ctx context.Context, now time.Time, max int) error {
	if _, err := c.Run(ctx, ScriptExpire, []string{c.Keys.Expire()}, []string{Ms(now), strconv.Itoa(max)}); err != nil {
		return fmt.Errorf("recover: sweep expired records: %w", err)
	}
	return nil
}

// SplitLeaseMember splits an active-index member "<id>|<token>".
func SplitLeaseMember(m string) (id, token string) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] == '|' {
			return m[:i], m[i+1:]
		}
	}
	return m, ""
}

// CancelWith runs a backend's cancel script: KEYS record, extraKeys...;
// ARGV id, now, retention ms, extraArgs... The script calls lib.lua's
// cancel_job.
func (c *Core) CancelWith(ctx context.Context, script Script, id string, extraKeys []string, extraArgs ...string) error {
	if id == "" {
		return fmt.Errorf("%w: Cancel: id must not be empty", jobstore.ErrInvalid)
	}
	if err := c.Check(); err != nil {
		return err
	}
	args := append([]string{id, Ms(c.Now()), c.retentionMs()}, extraArgs...)
	_, err := c.Run(ctx, script, append([]string{c.Keys.Job(id)}, extraKeys...), args)
	return err
}
