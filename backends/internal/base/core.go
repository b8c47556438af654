package base

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/backends/internal/record"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// MaxClaim is the largest ClaimRequest.Max a store accepts: one claim is one
// script call, and a larger batch would hold Redis for too long.
const MaxClaim = jobstore.MaxClaim

// MaxEnqueue is the largest batch one Enqueue call accepts, for the same reason.
const MaxEnqueue = 1000

// Core is the part of a store every backend shares: the client, the options,
// the key namer, the loaded scripts, lease tokens and backoff jitter.
type Core struct {
	C       rclient.Client
	Opts    jobstore.Options
	Keys    keys.Keys
	Scripts Scripts

	tokenPrefix string
	tokenSeq    atomic.Uint64
	mu          sync.Mutex
	rng         *mrand.Rand
	closed      atomic.Bool
	alarm       alarm
	// emptied: the last claim left the queue empty (BlockClaim).
	emptied atomic.Bool
}

// NewCore validates o, fills its defaults and loads the backend's scripts.
func NewCore(ctx context.Context, c rclient.Client, o jobstore.Options, scripts func(jobstore.Encoding) (Scripts, error)) (*Core, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil Redis client", jobstore.ErrInvalid)
	}
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("lease token prefix: %w", err)
	}
	if _, ok := c.(rclient.Waiter); o.WaitReplicas > 0 && !ok {
		return nil, fmt.Errorf("%w: Options.WaitReplicas %d: client %s cannot send WAIT on the connection of its write", jobstore.ErrInvalid, o.WaitReplicas, c.Name())
	}
	core := &Core{C: c, Opts: o, Keys: keys.New(o.Queue), tokenPrefix: hex.EncodeToString(b[:]),
		rng: mrand.New(mrand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15))}
	if core.Scripts, err = scripts(o.Encoding); err != nil {
		return nil, err
	}
	return core, nil
}

// Close marks the core closed; later calls get jobstore.ErrClosed.
func (c *Core) Close() error {
	c.closed.Store(true)
	c.stopAlarm()
	return nil
}

// Check returns ErrClosed after Close.
func (c *Core) Check() error {
	if c.closed.Load() {
		return jobstore.ErrClosed
	}
	return nil
}

// Now is the store's clock.
func (c *Core) Now() time.Time { return c.Opts.Clock.Now() }

// Real is how long a wait of d on the store's clock lasts on the wall
// clock: d itself, except under a simulated clock (clock.Scaled), where
// every duration of the contract (a claim's Wait, Options.PollInterval, the
// time to a RunAt) is simulated and the store sleeps or blocks in Redis
// for its real length.
func (c *Core) Real(d time.Duration) time.Duration { return clock.RealDuration(c.Opts.Clock, d) }

// Ms formats t as Unix milliseconds, the unit every script takes.
func Ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// TokenBase returns a token unique to one claim call: every lease the
// call's pop takes has it as its token (lib.lua's pop_leases), and a
// hand-off appends ".<n>" for the n-th job it gives a waiter.
func (c *Core) TokenBase() string {
	return c.tokenPrefix + "-" + strconv.FormatUint(c.tokenSeq.Add(1), 36)
}

// RetryAt is when a job that failed on its attempt-th retry runs again:
// now + Backoff.Delay(attempt), times a factor drawn uniformly from
// [1-Jitter, 1+Jitter] with the store's seeded generator.
func (c *Core) RetryAt(now time.Time, attempt int) time.Time {
	d := c.Opts.Backoff.Delay(attempt)
	if j := c.Opts.Backoff.Jitter; j > 0 {
		c.mu.Lock()
		f := 1 - j + 2*j*c.rng.Float64()
		c.mu.Unlock()
		d = time.Duration(math.Round(float64(d) * f))
	}
	return now.Add(d)
}

// Run runs a script and maps its error replies to sentinel errors. The
// "enqueue" script of every backend is followed by WAIT when
// Options.WaitReplicas asks for it (jobstore.Options).
func (c *Core) Run(ctx context.Context, script Script, keys, args []string) (any, error) {
	name := script.name
	var v any
	var err error
	if name == "enqueue" && c.Opts.WaitReplicas > 0 {
		v, err = c.Scripts.runWait(ctx, c.C.(rclient.Waiter), name, keys, args, c.Opts.WaitReplicas, c.Opts.WaitTimeout)
	} else {
		v, err = c.Scripts.run(ctx, c.C, name, keys, args)
	}
	if err != nil {
		return nil, MapError(name, err)
	}
	return v, nil
}

// MapError turns the AE_* error replies of lib.lua into jobstore's sentinel
// errors (wrapped with the reply's detail); other errors are wrapped as they are.
func MapError(op string, err error) error {
	var re *rclient.RedisError
	if errors.As(err, &re) {
		for _, m := range []struct {
			code string
			err  error
		}{{"AE_LEASE_LOST", jobstore.ErrLeaseLost}, {"AE_NOT_FOUND", jobstore.ErrNotFound},
			{"AE_DUPLICATE", jobstore.ErrDuplicateID}, {"AE_NOT_CANCELABLE", jobstore.ErrNotCancelable}} {
			if i := strings.Index(re.Msg, m.code); i >= 0 {
				detail := strings.TrimSpace(re.Msg[i+len(m.code):])
				return fmt.Errorf("%w: %s", m.err, detail)
			}
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// EnqueueArgs validates jobs and lays them out as lib.lua's read_new_jobs
// expects: ARGV n, then per job id, runAt, payload, npairs, pairs (the
// record's other fields, RecordExtras). It returns the record keys (one
// per job, in order) and the argument list.
func (c *Core) EnqueueArgs(now time.Time, jobs []jobstore.NewJob) (keys, args []string, runAts []time.Time, err error) {
	if len(jobs) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: Enqueue: no jobs", jobstore.ErrInvalid)
	}
	if len(jobs) > MaxEnqueue {
		return nil, nil, nil, fmt.Errorf("%w: Enqueue: %d jobs in one call, at most %d allowed", jobstore.ErrInvalid, len(jobs), MaxEnqueue)
	}
	args = append(make([]string, 0, 1+len(jobs)*24), strconv.Itoa(len(jobs)))
	seen := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		if err := c.validateJob(j); err != nil {
			return nil, nil, nil, err
		}
		// A batch that names a job twice is refused here, whole (the
		// scripts check only the records already stored).
		if seen[j.ID] {
			return nil, nil, nil, fmt.Errorf("%w: %s (twice in one Enqueue)", jobstore.ErrDuplicateID, j.ID)
		}
		seen[j.ID] = true
		runAt := j.RunAt
		if runAt.IsZero() {
			runAt = now
		}
		runAt = runAt.Truncate(time.Millisecond)
		pairs, err := record.Extras(j, runAt, now)
		if err != nil {
			return nil, nil, nil, err
		}
		keys = append(keys, c.Keys.Job(j.ID))
		runAts = append(runAts, runAt)
		args = append(args, j.ID, Ms(runAt), string(j.Payload), strconv.Itoa(len(pairs)/2))
		args = append(args, pairs...)
	}
	return keys, args, runAts, nil
}

func (c *Core) validateJob(j jobstore.NewJob) error { return jobstore.CheckJob(j, c.Opts) }

// ValidateClaim checks a ClaimRequest (the contract's ClaimRequest.Check).
func ValidateClaim(r jobstore.ClaimRequest) error { return r.Check() }

// ValidateLease checks a Lease presented to Extend, Complete or Fail
// (the contract's Lease.Check).
func ValidateLease(l jobstore.Lease) error { return l.Check() }

// DecodeClaimed turns the jobs a claim script returned (lib.lua's
// activate_all, lib_stream.lua's stream_take; laid out by view_out: id,
// token, payload, then "<retry count>|<name>" or false) into claimed jobs
// with their leases.
// The claim's own writes are laid over them here: Status InProgress,
// worker, StartedAt and LastUpdatedAt now, the token and the deadline, as
// lib.lua's claim_record wrote them. The other fields stay zero
// (jobstore.Claimed: Get reads the whole record).
func DecodeClaimed(v any, worker string, now, deadline time.Time) ([]jobstore.Claimed, error) {
	arr, _ := v.([]any)
	if len(arr)%4 != 0 {
		return nil, fmt.Errorf("claim reply: %d items, want 4 a job (id, token, payload, retries|name)", len(arr))
	}
	out := make([]jobstore.Claimed, 0, len(arr)/4)
	now, deadline = time.UnixMilli(now.UnixMilli()), time.UnixMilli(deadline.UnixMilli())
	for i := 0; i < len(arr); i += 4 {
		id, _ := arr[i].(string)
		token, _ := arr[i+1].(string)
		j := jobstore.Job{ID: id, Status: jobstore.StatusInProgress, WorkerID: worker,
			StartedAt: now, LastUpdatedAt: now, LeaseToken: token, LeaseDeadline: deadline}
		if p, ok := arr[i+2].(string); ok {
			j.Payload = []byte(p)
		}
		if extra, ok := arr[i+3].(string); ok {
			retry, name, _ := strings.Cut(extra, "|")
			j.Name = name
			if retry != "" {
				n, err := strconv.Atoi(retry)
				if err != nil {
					return out, fmt.Errorf("claim reply: job %q RetryCount %q: %w", id, retry, err)
				}
				j.RetryCount = n
			}
		}
		out = append(out, jobstore.Claimed{Job: j, Lease: jobstore.Lease{
			JobID: id, Token: token, Deadline: deadline, Attempt: j.RetryCount}})
	}
	return out, nil
}

// DecodeClaimedRecords is DecodeClaimed for the seed variants' claims,
// which return id, token, whole record triples (lib.lua's rec_snapshot,
// read before the claim's writes), as their seeds' claims returned whole
// jobs.
func DecodeClaimedRecords(v any, worker string, now, deadline time.Time) ([]jobstore.Claimed, error) {
	arr, _ := v.([]any)
	out := make([]jobstore.Claimed, 0, len(arr)/3)
	now, deadline = time.UnixMilli(now.UnixMilli()), time.UnixMilli(deadline.UnixMilli())
	for i := 0; i+2 < len(arr); i += 3 {
		id, _ := arr[i].(string)
		token, _ := arr[i+1].(string)
		j, err := record.DecodeOf(id, arr[i+2])
		if err != nil {
			return out, err
		}
		j.Status, j.WorkerID, j.StartedAt, j.LastUpdatedAt = jobstore.StatusInProgress, worker, now, now
		j.LeaseToken, j.LeaseDeadline = token, deadline
		out = append(out, jobstore.Claimed{Job: j, Lease: jobstore.Lease{
			JobID: j.ID, Token: token, Deadline: deadline, Attempt: j.RetryCount}})
	}
	return out, nil
}

// Get reads one record.
func (c *Core) Get(ctx context.Context, id string) (jobstore.Job, error) {
	if id == "" {
		return jobstore.Job{}, fmt.Errorf("%w: Get: id must not be empty", jobstore.ErrInvalid)
	}
	if err := c.Check(); err != nil {
		return jobstore.Job{}, err
	}
	cmd := rclient.Cmd("HGETALL", c.Keys.Job(id))
	if c.Opts.Encoding == jobstore.EncodingJSON {
		cmd = rclient.Cmd("GET", c.Keys.Job(id))
	}
	v, err := c.C.Do(ctx, cmd)
	if err != nil {
		return jobstore.Job{}, fmt.Errorf("get %q: %w", id, err)
	}
	j, err := record.DecodeOf(id, v)
	if errors.Is(err, jobstore.ErrNotFound) {
		return j, fmt.Errorf("%w: %q", jobstore.ErrNotFound, id)
	}
	return j, err
}

// PollClaim calls try until it returns work, the wait runs out or ctx ends,
// sleeping Options.PollInterval between tries: the claim-wait of backends
// that cannot block in Redis.
func (c *Core) PollClaim(ctx context.Context, wait time.Duration, try func() ([]jobstore.Claimed, error)) ([]jobstore.Claimed, error) {
	deadline := time.Now().Add(c.Real(wait))
	for {
		got, err := try()
		if err != nil || len(got) > 0 {
			return got, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		t := time.NewTimer(min(left, c.PollPause()))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
	}
}

// MinRealPoll is the shortest real pause between two polls. On simulated
// time a poll interval shrinks by the speed (100ms at x600 is 0.17ms real),
// which would turn a polling store into a busy loop that measures the
// harness, not the design; below this floor the poll keeps 1ms of real
// time, so its simulated interval reads longer than the one configured
// (scenarios/README.md, "Simulated time", says so).
const MinRealPoll = time.Millisecond

// PollPause is the real time between two polls: Options.PollInterval
// scaled to the wall clock, at least MinRealPoll.
func (c *Core) PollPause() time.Duration { return max(c.Real(c.Opts.PollInterval), MinRealPoll) }

// Int reads an integer reply.
func Int(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// Strings reads an array reply of strings.
func Strings(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
