package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

var (
	queueSeq   atomic.Int64
	queueNonce = fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
)

func queueName(caseName string) string {
	return fmt.Sprintf("conf-%s-%s-%d", queueNonce, caseName, queueSeq.Add(1))
}

// env is what a case body works with.
type env struct {
	t       *testing.T
	ctx     context.Context
	backend Backend
	client  rclient.Client
	target  Target
	clk     *clock.Manual
	opts    jobstore.Options
	s       jobstore.Store
	mover   jobstore.Mover // nil unless the store implements Mover
	caps    jobstore.Capabilities
	// clockLeases: leases expire on the manual clock alone
	// (jobstore.CapStoreClockLeases).
	clockLeases bool
	// lease is the lease of claims that a case lets expire (see expire).
	lease time.Duration
}

// runCase runs one case on a fresh store; extra, when set, changes the
// options after the case's own.
func runCase(t *testing.T, b Backend, c rclient.Client, tg Target, tc testCase, extra func(*jobstore.Options)) {
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	t.Cleanup(cancel)
	clk := clock.NewManual(time.Now())
	o := jobstore.Options{
		Queue:        queueName(tc.name),
		Clock:        clk,
		Backoff:      jobstore.Backoff{Base: backoffBase, Max: backoffMax},
		PollInterval: 50 * time.Millisecond,
		Seed:         1,
	}
	if tc.opts != nil {
		tc.opts(&o)
	}
	if extra != nil {
		extra(&o)
	}
	if b.Options != nil {
		b.Options(&o)
	}
	s, err := b.New(ctx, c, o)
	if err != nil {
		t.Fatalf("%s: New(queue %q): %v", b.Name, o.Queue, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	caps := s.Capabilities()
	skipLacking(t, b.Name, caps, tc.needs)
	e := &env{t: t, ctx: ctx, backend: b, client: c, target: tg, clk: clk, opts: o, s: s, caps: caps}
	e.mover, _ = s.(jobstore.Mover)
	e.clockLeases = caps.Has(jobstore.CapStoreClockLeases)
	e.lease = realLease
	if e.clockLeases {
		e.lease = clockLease
	}
	tc.fn(e)
}

// skipLacking skips t, naming every capability in needs that caps lacks.
func skipLacking(t *testing.T, store string, caps jobstore.Capabilities, needs []jobstore.Capability) {
	t.Helper()
	var lack []string
	for _, n := range needs {
		if !caps.Has(n) {
			lack = append(lack, strconv.Quote(string(n)))
		}
	}
	switch len(lack) {
	case 0:
	case 1:
		t.Skipf("%s lacks capability %s", store, lack[0])
	default:
		t.Skipf("%s lacks capabilities %s", store, strings.Join(lack, ", "))
	}
}

// has reports whether the store declares every capability in cs.
func (e *env) has(cs ...jobstore.Capability) bool {
	for _, c := range cs {
		if !e.caps.Has(c) {
			return false
		}
	}
	return true
}

// part runs fn as the subtest name, on the same store and clock, skipped
// (naming the capability) unless the store declares every one of needs.
// It gates the parts of a case that need more than the case itself.
func (e *env) part(name string, needs []jobstore.Capability, fn func(e *env)) {
	e.t.Helper()
	e.t.Run(name, func(t *testing.T) {
		skipLacking(t, e.backend.Name, e.caps, needs)
		sub := *e
		sub.t = t
		fn(&sub)
	})
}

func randHex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[rand.IntN(16)]
	}
	return string(b)
}

// id returns a fresh job id with a random part.
func (e *env) id(prefix string) string { return prefix + "-" + randHex(10) }

func (e *env) enqueue(jobs ...jobstore.NewJob) {
	e.t.Helper()
	if err := e.s.Enqueue(e.ctx, jobs...); err != nil {
		e.t.Fatalf("Enqueue(%d jobs, first %q): %v", len(jobs), jobs[0].ID, err)
	}
}

// promote plays the mover: it promotes every due job when the store is a Mover.
func (e *env) promote(ctx context.Context) error {
	if e.mover == nil {
		return nil
	}
	for range 1000 {
		n, err := e.mover.Promote(ctx, 1000)
		if err != nil {
			return fmt.Errorf("Promote: %w", err)
		}
		if n < 1000 {
			return nil
		}
	}
	return errors.New("Promote kept reporting full batches")
}

// claimReq is Claim preceded by Promote on a Mover store.
func (e *env) claimReq(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if err := e.promote(ctx); err != nil {
		return nil, err
	}
	return e.s.Claim(ctx, req)
}

// claimAs claims up to max jobs for worker w, failing the test on error.
func (e *env) claimAs(w string, max int, lease time.Duration) []jobstore.Claimed {
	e.t.Helper()
	cl, err := e.claimReq(e.ctx, jobstore.ClaimRequest{WorkerID: w, Max: max, Lease: lease})
	if err != nil {
		e.t.Fatalf("Claim(worker %q, max %d, lease %v): %v", w, max, lease, err)
	}
	if len(cl) > max {
		e.t.Fatalf("Claim(max %d) returned %d jobs", max, len(cl))
	}
	return cl
}

func (e *env) claim(max int, lease time.Duration) []jobstore.Claimed {
	e.t.Helper()
	return e.claimAs("worker-1", max, lease)
}

// claimAll claims, max at a time, until a Claim returns nothing, and
// returns the ids it got.
func (e *env) claimAll(max int, lease time.Duration) map[string]bool {
	e.t.Helper()
	got := map[string]bool{}
	for {
		cl := e.claim(max, lease)
		if len(cl) == 0 {
			return got
		}
		for _, c := range cl {
			got[c.Job.ID] = true
		}
	}
}

// claimOne claims and expects exactly the job id.
func (e *env) claimOne(id string, lease time.Duration) jobstore.Claimed {
	e.t.Helper()
	return e.claimOneAs("worker-1", id, lease)
}

func (e *env) claimOneAs(w, id string, lease time.Duration) jobstore.Claimed {
	e.t.Helper()
	cl := e.claimAs(w, 1, lease)
	if len(cl) != 1 || cl[0].Job.ID != id {
		e.t.Fatalf("at %s: Claim returned %v, want exactly [%s]", e.at(), ids(cl), id)
	}
	return cl[0]
}

// claimNone expects no job to be claimable.
func (e *env) claimNone(when string) {
	e.t.Helper()
	if cl := e.claim(10, holdLease); len(cl) != 0 {
		e.t.Fatalf("%s (clock %s): Claim returned %v, want nothing", when, e.at(), ids(cl))
	}
}

// enqueueClaim enqueues one job and claims it, expecting that very job.
func (e *env) enqueueClaim(nj jobstore.NewJob, lease time.Duration) jobstore.Claimed {
	e.t.Helper()
	e.enqueue(nj)
	return e.claimOne(nj.ID, lease)
}

func (e *env) get(id string) jobstore.Job {
	e.t.Helper()
	j, err := e.s.Get(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Get(%q): %v", id, err)
	}
	if j.ID != id {
		e.t.Fatalf("Get(%q) returned job with ID %q", id, j.ID)
	}
	return j
}

func (e *env) wantMissing(id, why string) {
	e.t.Helper()
	if j, err := e.s.Get(e.ctx, id); !errors.Is(err, jobstore.ErrNotFound) {
		e.t.Errorf("%s: Get(%q) = (status %v, err %v), want ErrNotFound", why, id, j.Status, err)
	}
}

func (e *env) wantStatus(id string, want jobstore.Status) jobstore.Job {
	e.t.Helper()
	j := e.get(id)
	if j.Status != want {
		e.t.Errorf("job %s: Status %v, want %v", id, j.Status, want)
	}
	return j
}

func (e *env) stats() jobstore.Stats {
	e.t.Helper()
	if err := e.promote(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	st, err := e.s.Stats(e.ctx)
	if err != nil {
		e.t.Fatalf("Stats: %v", err)
	}
	return st
}

func (e *env) recover(max int) jobstore.RecoverResult {
	e.t.Helper()
	r, err := e.s.Recover(e.ctx, max)
	if err != nil {
		e.t.Fatalf("Recover(%d): %v", max, err)
	}
	return r
}

// expire lets a lease of duration d taken now (or extended now) run out: on
// the manual clock always, and in real time too when the backend judges
// idleness by Redis's clock.
func (e *env) expire(d time.Duration) {
	e.clk.Advance(d + time.Millisecond)
	if !e.clockLeases {
		time.Sleep(d + 50*time.Millisecond)
	}
}

// idle lets d of a lease's time pass (d shorter than the lease).
func (e *env) idle(d time.Duration) {
	e.clk.Advance(d)
	if !e.clockLeases {
		time.Sleep(d)
	}
}

// at is the manual clock's reading, for messages.
func (e *env) at() string { return e.clk.Now().Format("15:04:05.000") }
