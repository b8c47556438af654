// Package conformance is the one behaviour suite every aebench backend
// registers into. It drives a jobstore.Store against real Redis (standalone
// and Cluster, through each rclient adapter) and checks the contract written
// in package jobstore: FIFO among equal RunAt, never before RunAt, fencing by
// lease token, retries with backoff and dead-lettering, exactly-once recovery
// under concurrent recoverers, atomic bulk enqueue, bad-input rejection, Stats,
// record retention, both record encodings, and behaviour while Redis is
// unreachable.
//
// A backend's test calls Run with a Backend entry; Run makes one subtest per
// backend/client/topology/case. Each case gets a fresh queue, a clock.Manual
// and small backoff settings. Cases that need a capability the backend does
// not declare are skipped with a message naming the capability. When the
// store implements jobstore.Mover the suite plays the mover: it calls Promote
// before every Claim (and before Stats).
//
// Leases: a backend with jobstore.CapStoreClockLeases has its leases expired
// by advancing the manual clock; a backend that judges idleness by Redis's
// clock gets short real leases and real sleeps as well, so the same cases run
// on both kinds.
//
// Encodings: every case whose outcome depends on the record layout runs
// with the default EncodingHash under its own name, and again with
// EncodingJSON as EncodingJSON/<Case>; the timing and transport cases run once.
//
// Run pauses the shared Redis in one case (RedisUnreachable), so it runs its
// subtests sequentially.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Backend is one strategy under test: its name and its constructor.
type Backend struct {
	Name string
	New  func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error)
}

// Adapt turns a backend constructor that returns its concrete store type
// into Backend.New's signature, so each registration is one line:
//
//	{Name: "zset", New: conformance.Adapt(zset.New)}
func Adapt[S jobstore.Store](newStore func(context.Context, rclient.Client, jobstore.Options) (S, error)) func(context.Context, rclient.Client, jobstore.Options) (jobstore.Store, error) {
	return func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		s, err := newStore(ctx, c, o)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return s, nil
	}
}

// Target is a Redis topology to run against: "single" or "cluster".
type Target struct {
	Name  string
	Redis *redisserver.Redis
}

// Timing knobs.
const (
	// realLease is the lease of cases that let it expire, on backends that
	// judge idleness by Redis's clock (real time).
	realLease = 200 * time.Millisecond
	// clockLease is the lease of cases that let it expire on the manual clock.
	clockLease = 30 * time.Second
	// holdLease is a lease that must not expire during a case.
	holdLease = 10 * time.Minute
	// caseTimeout bounds every case.
	caseTimeout = 30 * time.Second
	// backoffBase and backoffMax are the suite's default Options.Backoff.
	backoffBase = time.Second
	backoffMax  = 8 * time.Second
)

// testCase is one behaviour: the capabilities it needs, options it changes
// from the suite's defaults, and its body.
type testCase struct {
	name  string
	needs []jobstore.Capability
	opts  func(*jobstore.Options)
	fn    func(e *env)
	// noEncoding marks cases whose outcome does not depend on the record
	// encoding; EncodingJSON reruns every other case with EncodingJSON.
	noEncoding bool
}

// suite is the case table, in running order. (A function, not a variable:
// EncodingJSON reruns it.)
func suite() []testCase {
	return []testCase{
		{name: "Capabilities", noEncoding: true, fn: caseCapabilities},
		{name: "FIFOEqualRunAt", needs: []jobstore.Capability{jobstore.CapStrictFIFO}, fn: caseFIFOEqualRunAt},
		{name: "NeverBeforeRunAt", fn: caseNeverBeforeRunAt},
		{name: "ConcurrentClaimers", fn: caseConcurrentClaimers},
		{name: "BulkEnqueue", opts: smallPayload, fn: caseBulkEnqueue},
		{name: "LeaseExpiryRecover", fn: caseLeaseExpiryRecover},
		{name: "HeartbeatPreventsRecovery", fn: caseHeartbeatPreventsRecovery},
		{name: "ExpiredLeaseStillCompletes", fn: caseExpiredLeaseStillCompletes},
		{name: "StaleCompleteAfterRecovery", fn: caseStaleCompleteAfterRecovery},
		{name: "FailBackoffRetriesDeadLetter", fn: caseFailBackoffRetriesDeadLetter},
		{name: "FailBackoffJitter", opts: func(o *jobstore.Options) { o.Backoff.Jitter = 0.5; o.Seed = 7 }, fn: caseFailBackoffJitter},
		{name: "ConcurrentRecoverers", fn: caseConcurrentRecoverers},
		{name: "RecoverDeadLettersPastLimit", fn: caseRecoverDeadLettersPastLimit},
		{name: "BatchComplete", fn: caseBatchComplete},
		{name: "Cancel", fn: caseCancel},
		{name: "StatsAgree", fn: caseStatsAgree},
		{name: "DuplicateID", fn: caseDuplicateID},
		{name: "BadInput", opts: smallPayload, fn: caseBadInput},
		{name: "GetRoundTrip", fn: caseGetRoundTrip},
		{name: "CompletedExpires", opts: func(o *jobstore.Options) { o.Retention = retention }, fn: caseCompletedExpires},
		{name: "EncodingJSON", opts: useJSON, noEncoding: true, fn: caseEncodingJSON},
		{name: "BlockingClaimWakes", needs: []jobstore.Capability{jobstore.CapBlockingClaim}, noEncoding: true, fn: caseBlockingClaimWakes},
		{name: "ClaimWaitPolls", noEncoding: true, fn: caseClaimWaitPolls},
		{name: "RedisUnreachable", noEncoding: true, fn: caseRedisUnreachable},
	}
}

func useJSON(o *jobstore.Options) { o.Encoding = jobstore.EncodingJSON }

const maxPayload = 1024

func smallPayload(o *jobstore.Options) { o.MaxPayload = maxPayload }

// Run runs every case for every backend, client library and target, as
// subtests named <backend>/<client>/<topology>/<Case>. clients are names
// rclient.New accepts ("go-redis", "rueidis").
func Run(t *testing.T, backends []Backend, targets []Target, clients []string) {
	t.Helper()
	if len(backends) == 0 || len(targets) == 0 || len(clients) == 0 {
		t.Fatalf("conformance.Run: need at least one backend (%d), target (%d) and client (%d)", len(backends), len(targets), len(clients))
	}
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			for _, cn := range clients {
				t.Run(cn, func(t *testing.T) {
					for _, tg := range targets {
						t.Run(tg.Name, func(t *testing.T) {
							if tg.Redis == nil {
								t.Fatalf("target %q has no Redis", tg.Name)
							}
							c, err := rclient.New(cn, tg.Redis.ClientOptions())
							if err != nil {
								t.Fatalf("rclient.New(%q) on %s: %v", cn, tg.Name, err)
							}
							t.Cleanup(func() { _ = c.Close() })
							for _, tc := range suite() {
								t.Run(tc.name, func(t *testing.T) { runCase(t, b, c, tg, tc, nil) })
							}
						})
					}
				})
			}
		})
	}
}

// CaseNames lists the suite's cases in the order they run.
func CaseNames() []string {
	cases := suite()
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	return names
}

var (
	queueSeq   atomic.Int64
	queueNonce = fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
)

func queueName(caseName string) string {
	return fmt.Sprintf("conf-%s-%s-%d", queueNonce, caseName, queueSeq.Add(1))
}

// env is what a case body works with.
type env struct {
	t          *testing.T
	ctx        context.Context
	backend    Backend
	client     rclient.Client
	target     Target
	clk        *clock.Manual
	opts       jobstore.Options
	s          jobstore.Store
	mover      jobstore.Mover // nil unless the store implements Mover
	caps       jobstore.Capabilities
	storeClock bool
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
	for _, n := range tc.needs {
		if !caps.Has(n) {
			t.Skipf("backend lacks capability %q", n)
		}
	}
	e := &env{t: t, ctx: ctx, backend: b, client: c, target: tg, clk: clk, opts: o, s: s, caps: caps}
	e.mover, _ = s.(jobstore.Mover)
	e.storeClock = caps.Has(jobstore.CapStoreClockLeases)
	e.lease = realLease
	if e.storeClock {
		e.lease = clockLease
	}
	tc.fn(e)
}

// ---- helpers ---------------------------------------------------------------

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
	if !e.storeClock {
		time.Sleep(d + 50*time.Millisecond)
	}
}

// idle lets d of a lease's time pass (d shorter than the lease).
func (e *env) idle(d time.Duration) {
	e.clk.Advance(d)
	if !e.storeClock {
		time.Sleep(d)
	}
}

// at is the manual clock's reading, for messages.
func (e *env) at() string { return e.clk.Now().Format("15:04:05.000") }

func wantErrIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want errors.Is(err, %v)", what, err, target)
	}
}

func ids(cl []jobstore.Claimed) []string {
	out := make([]string, len(cl))
	for i, c := range cl {
		out[i] = c.Job.ID
	}
	return out
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}

// diffJob lists the fields that differ between a and b, skipping the named ones.
func diffJob(a, b jobstore.Job, skip ...string) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		if slices.Contains(skip, name) {
			continue
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if !sameValue(x, y) {
			out = append(out, fmt.Sprintf("%s: %s != %s", name, show(x), show(y)))
		}
	}
	return out
}

func sameValue(x, y any) bool {
	switch xv := x.(type) {
	case time.Time:
		return xv.Equal(y.(time.Time))
	case []byte:
		return bytes.Equal(xv, y.([]byte))
	}
	rx, ry := reflect.ValueOf(x), reflect.ValueOf(y)
	if rx.Kind() == reflect.Map && rx.Len() == 0 && ry.Len() == 0 {
		return true // nil and empty maps are the same record
	}
	return reflect.DeepEqual(x, y)
}

func show(v any) string {
	switch x := v.(type) {
	case time.Time:
		if x.IsZero() {
			return "zero"
		}
		return x.Format("15:04:05.000")
	case []byte:
		if len(x) > 40 {
			return fmt.Sprintf("%q...(%d bytes)", x[:40], len(x))
		}
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%v", v)
}

// diffNewJob lists the producer's fields that did not survive into j.
func diffNewJob(j jobstore.Job, nj jobstore.NewJob) []string {
	want := jobstore.Job{
		ID: nj.ID, Name: nj.Name, Payload: nj.Payload, MaxRetries: nj.MaxRetries,
		Headers: nj.Headers, RouteParams: nj.RouteParams, QueryParams: nj.QueryParams, RunAt: nj.RunAt,
	}
	got := jobstore.Job{
		ID: j.ID, Name: j.Name, Payload: j.Payload, MaxRetries: j.MaxRetries,
		Headers: j.Headers, RouteParams: j.RouteParams, QueryParams: j.QueryParams, RunAt: j.RunAt,
	}
	if nj.RunAt.IsZero() {
		got.RunAt = time.Time{}
	}
	return diffJob(got, want)
}

// nonSortedIDs returns n random ids whose order is neither ascending nor
// descending, so a store that orders by id cannot pass as FIFO.
func nonSortedIDs(n int) []string {
	for {
		out := make([]string, n)
		for i := range out {
			out[i] = "fifo-" + randHex(8)
		}
		desc := slices.Clone(out)
		slices.Reverse(desc)
		if !slices.IsSorted(out) && !slices.IsSorted(desc) {
			return out
		}
	}
}

// ---- cases -----------------------------------------------------------------

func caseCapabilities(e *env) {
	known := jobstore.KnownCapabilities()
	var declared []string
	for c, on := range e.caps {
		if !on {
			continue
		}
		declared = append(declared, string(c))
		if !slices.Contains(known, c) {
			e.t.Errorf("declares unknown capability %q", c)
		}
	}
	sort.Strings(declared)
	e.t.Logf("%s declares %v", e.backend.Name, declared)
	if e.caps.Has(jobstore.CapMoverLoop) && e.mover == nil {
		e.t.Errorf("declares %q but does not implement jobstore.Mover", jobstore.CapMoverLoop)
	}
	if e.caps.Has(jobstore.CapMover) != (e.mover != nil) {
		e.t.Errorf("declares %q = %v but implements jobstore.Mover = %v", jobstore.CapMover, e.caps.Has(jobstore.CapMover), e.mover != nil)
	}
}

func caseFIFOEqualRunAt(e *env) {
	for _, v := range []struct {
		name  string
		delay time.Duration // 0: RunAt left zero (means now)
	}{{"RunAt zero", 0}, {"RunAt now+1.5s", 1500 * time.Millisecond}} {
		want := nonSortedIDs(20)
		var runAt time.Time
		if v.delay > 0 {
			runAt = e.clk.Now().Add(v.delay)
		}
		// Half one call each, half in one bulk call: both keep enqueue order.
		for _, id := range want[:10] {
			e.enqueue(jobstore.NewJob{ID: id, RunAt: runAt})
		}
		var bulk []jobstore.NewJob
		for _, id := range want[10:] {
			bulk = append(bulk, jobstore.NewJob{ID: id, RunAt: runAt})
		}
		e.enqueue(bulk...)
		e.clk.Advance(v.delay)
		var got []string
		for len(got) <= len(want) {
			cl := e.claim(3, holdLease)
			if len(cl) == 0 {
				break
			}
			got = append(got, ids(cl)...)
		}
		if !slices.Equal(got, want) {
			e.t.Errorf("%s: claim order\n got %v\nwant %v (enqueue order)", v.name, got, want)
		}
	}
}

func caseNeverBeforeRunAt(e *env) {
	now := e.clk.Now()
	late := e.id("late")
	e.enqueue(jobstore.NewJob{ID: late, RunAt: now.Add(5 * time.Second)})
	e.claimNone("job due at now+5s, clock at now")
	e.clk.Advance(4999 * time.Millisecond)
	e.claimNone("job due at now+5s, clock at now+4.999s")
	e.clk.Advance(time.Millisecond)
	cl := e.claimOne(late, holdLease)
	if !cl.Job.RunAt.Equal(now.Add(5 * time.Second)) {
		e.t.Errorf("claimed job RunAt %s, want %s", show(cl.Job.RunAt), show(now.Add(5*time.Second)))
	}

	// Ordering across RunAts, with millisecond precision.
	base := e.clk.Now()
	// Enqueued out of RunAt order; the backdated job comes after the one due now.
	offsets := []time.Duration{3 * time.Second, 0, 1001 * time.Millisecond, 2 * time.Second, -time.Second, 1000 * time.Millisecond, 1500 * time.Millisecond}
	idOf := map[time.Duration]string{}
	for _, off := range offsets {
		id := e.id(fmt.Sprintf("at%dms", off.Milliseconds()))
		idOf[off] = id
		e.enqueue(jobstore.NewJob{ID: id, RunAt: base.Add(off)})
	}
	steps := []struct {
		advance time.Duration
		want    []time.Duration
	}{
		{0, []time.Duration{-time.Second, 0}},
		{1000 * time.Millisecond, []time.Duration{1000 * time.Millisecond}},
		{time.Millisecond, []time.Duration{1001 * time.Millisecond}},
		{2 * time.Second, []time.Duration{1500 * time.Millisecond, 2 * time.Second, 3 * time.Second}},
	}
	for _, st := range steps {
		e.clk.Advance(st.advance)
		var want []string
		for _, off := range st.want {
			want = append(want, idOf[off])
		}
		if got := ids(e.claim(10, holdLease)); !slices.Equal(got, want) {
			e.t.Errorf("clock base+%v: claimed %v, want %v (oldest RunAt first, none early)",
				e.clk.Now().Sub(base), got, want)
		}
	}
}

func caseConcurrentClaimers(e *env) {
	const n, workers, batch = 200, 8, 3
	var all []jobstore.NewJob
	for i := range n {
		all = append(all, jobstore.NewJob{ID: fmt.Sprintf("cc-%03d-%s", i, randHex(4))})
	}
	for i := 0; i < n; i += 50 {
		e.enqueue(all[i : i+50]...)
	}
	var (
		mu    sync.Mutex
		seen  = map[string]int{}
		order []string
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			worker := fmt.Sprintf("cc-worker-%d", w)
			for {
				cl, err := e.claimReq(e.ctx, jobstore.ClaimRequest{WorkerID: worker, Max: batch, Lease: holdLease})
				if err != nil {
					e.t.Errorf("%s: Claim: %v", worker, err)
					return
				}
				if len(cl) == 0 {
					return
				}
				if len(cl) > batch {
					e.t.Errorf("%s: Claim(max %d) returned %d", worker, batch, len(cl))
				}
				mu.Lock()
				for _, c := range cl {
					seen[c.Job.ID]++
					order = append(order, c.Job.ID)
				}
				mu.Unlock()
				for _, c := range cl {
					if c.Job.WorkerID != worker {
						e.t.Errorf("%s claimed %s but record says WorkerID %q", worker, c.Job.ID, c.Job.WorkerID)
					}
					if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
						e.t.Errorf("%s: Complete(%s): %v", worker, c.Job.ID, err)
					}
				}
			}
		})
	}
	wg.Wait()
	for id, k := range seen {
		if k > 1 {
			e.t.Errorf("job %s claimed %d times", id, k)
		}
	}
	if len(seen) != n {
		e.t.Errorf("claimed %d distinct jobs of %d (a Claim returned empty while jobs were still due?)", len(seen), n)
	}
	if st := e.stats(); st.Completed != n || st.InProgress != 0 || st.Due+st.Delayed != 0 {
		e.t.Errorf("Stats after all completed: %+v, want Completed %d and nothing else", st, n)
	}
}

func caseBulkEnqueue(e *env) {
	const n = 100
	var jobs []jobstore.NewJob
	for i := range n {
		jobs = append(jobs, jobstore.NewJob{ID: e.id(fmt.Sprintf("bulk%03d", i)), Payload: []byte(fmt.Sprint(i))})
	}
	e.enqueue(jobs...)
	for _, nj := range jobs {
		if d := diffNewJob(e.get(nj.ID), nj); len(d) > 0 {
			e.t.Errorf("job %s after bulk enqueue: %v", nj.ID, d)
		}
	}
	checkWaiting := func(when string) {
		e.t.Helper()
		st := e.stats()
		if st.Due+st.Delayed != n || (e.caps.Has(jobstore.CapExactStats) && st.Due != n) {
			e.t.Errorf("%s: Stats %+v, want %d due", when, st, n)
		}
	}
	checkWaiting("after bulk enqueue of 100")

	fresh := func(k int, prefix string) []jobstore.NewJob {
		var out []jobstore.NewJob
		for range k {
			out = append(out, jobstore.NewJob{ID: e.id(prefix)})
		}
		return out
	}
	wantNoneStored := func(batch []jobstore.NewJob, skip string, why string) {
		e.t.Helper()
		for _, nj := range batch {
			if nj.ID != "" && nj.ID != skip {
				e.wantMissing(nj.ID, why)
			}
		}
	}

	// A duplicate of a stored job in the middle of a batch: nothing stored.
	existing := jobs[42].ID
	before := e.get(existing)
	batch := fresh(9, "dupbatch")
	batch = slices.Insert(batch, 4, jobstore.NewJob{ID: existing, Payload: []byte("other")})
	err := e.s.Enqueue(e.ctx, batch...)
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "bulk Enqueue with one id already stored")
	wantNoneStored(batch, existing, "batch rejected for a duplicate")
	if d := diffJob(before, e.get(existing)); len(d) > 0 {
		e.t.Errorf("existing job %s changed by the rejected batch: %v", existing, d)
	}

	// The same id twice inside one batch: rejected, nothing stored.
	batch = fresh(5, "selfdup")
	batch = append(batch, jobstore.NewJob{ID: batch[1].ID})
	err = e.s.Enqueue(e.ctx, batch...)
	if !errors.Is(err, jobstore.ErrDuplicateID) && !errors.Is(err, jobstore.ErrInvalid) {
		e.t.Errorf("bulk Enqueue with an id twice: err = %v, want ErrDuplicateID or ErrInvalid", err)
	}
	wantNoneStored(batch, "", "batch with an id twice")

	// One invalid job in a batch: ErrInvalid, nothing stored.
	for _, bad := range []struct {
		name string
		job  jobstore.NewJob
	}{
		{"empty ID", jobstore.NewJob{ID: ""}},
		{"negative MaxRetries", jobstore.NewJob{ID: e.id("neg"), MaxRetries: -1}},
		{"payload over MaxPayload", jobstore.NewJob{ID: e.id("big"), Payload: bytes.Repeat([]byte("x"), maxPayload+1)}},
	} {
		batch := fresh(5, "invbatch")
		batch = slices.Insert(batch, 2, bad.job)
		err := e.s.Enqueue(e.ctx, batch...)
		wantErrIs(e.t, err, jobstore.ErrInvalid, "bulk Enqueue with one job with "+bad.name)
		wantNoneStored(batch, "", "batch with "+bad.name)
	}

	checkWaiting("after the rejected batches")
	got := map[string]bool{}
	for {
		cl := e.claim(50, holdLease)
		if len(cl) == 0 {
			break
		}
		for _, c := range cl {
			got[c.Job.ID] = true
		}
	}
	if len(got) != n {
		e.t.Errorf("claimed %d jobs after the rejected batches, want exactly the %d of the first batch", len(got), n)
	}
}

func caseLeaseExpiryRecover(e *env) {
	id := e.id("lease")
	e.enqueue(jobstore.NewJob{ID: id, MaxRetries: 3, Payload: []byte("p")})
	first := e.claimOneAs("worker-a", id, e.lease)
	if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("Recover right after claim (lease not expired) took %+v, want nothing", r)
	}
	e.expire(e.lease)
	r := e.recover(10)
	if !slices.Equal(r.Requeued, []string{id}) || len(r.DeadLettered) != 0 {
		e.t.Fatalf("Recover after lease expiry = %+v, want Requeued [%s]", r, id)
	}
	j := e.wantStatus(id, jobstore.StatusScheduled)
	if j.RetryCount != 1 {
		e.t.Errorf("after Recover: RetryCount %d, want 1", j.RetryCount)
	}
	if j.RunAt.After(e.clk.Now()) {
		e.t.Errorf("after Recover: RunAt %s is after now %s, want due at once", show(j.RunAt), e.at())
	}
	if st := e.stats(); st.InProgress != 0 {
		e.t.Errorf("after Recover: Stats.InProgress %d, want 0", st.InProgress)
	}
	if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("second Recover = %+v, want nothing", r)
	}

	second := e.claimOneAs("worker-b", id, holdLease)
	if second.Job.RetryCount != 1 || second.Job.Status != jobstore.StatusInProgress {
		e.t.Errorf("reclaimed job: RetryCount %d Status %v, want 1 InProgress", second.Job.RetryCount, second.Job.Status)
	}
	if second.Lease.Token == first.Lease.Token || second.Lease.Token == "" {
		e.t.Errorf("reclaim lease token %q, want a fresh one (old %q)", second.Lease.Token, first.Lease.Token)
	}

	before := e.get(id)
	wantErrIs(e.t, e.s.Complete(e.ctx, first.Lease, []byte("stale")), jobstore.ErrLeaseLost, "Complete with the recovered lease")
	_, err := e.s.Fail(e.ctx, first.Lease, "stale")
	wantErrIs(e.t, err, jobstore.ErrLeaseLost, "Fail with the recovered lease")
	_, err = e.s.Extend(e.ctx, first.Lease, time.Minute)
	wantErrIs(e.t, err, jobstore.ErrLeaseLost, "Extend with the recovered lease")
	if d := diffJob(before, e.get(id)); len(d) > 0 {
		e.t.Errorf("record changed by calls with the lost lease: %v", d)
	}
	if err := e.s.Complete(e.ctx, second.Lease, []byte("ok")); err != nil {
		e.t.Errorf("Complete with the current lease: %v", err)
	}
	e.wantStatus(id, jobstore.StatusCompleted)
}

func caseHeartbeatPreventsRecovery(e *env) {
	id := e.id("hb")
	L := e.lease
	cl := e.enqueueClaim(jobstore.NewJob{ID: id, MaxRetries: 3}, L)
	old := cl.Lease

	// Just before the deadline, heartbeat. (In real time, for backends on
	// Redis's clock: 3/4 of the lease, then half a lease more, so the check
	// below falls past the old lease in both clocks.)
	e.clk.Advance(L - time.Millisecond)
	if !e.storeClock {
		time.Sleep(L * 3 / 4)
	}
	lease, err := e.s.Extend(e.ctx, old, L)
	if err != nil {
		e.t.Fatalf("Extend before the deadline: %v", err)
	}
	if want := e.clk.Now().Add(L); !lease.Deadline.Equal(want) {
		e.t.Errorf("Extend deadline %s, want now+%v = %s", show(lease.Deadline), L, show(want))
	}
	if lease.JobID != id {
		e.t.Errorf("Extend lease JobID %q, want %q", lease.JobID, id)
	}
	if j := e.get(id); !j.LeaseDeadline.Equal(lease.Deadline) {
		e.t.Errorf("record LeaseDeadline %s, want the extended %s", show(j.LeaseDeadline), show(lease.Deadline))
	}
	// At the old deadline + 1ms, nothing to recover.
	e.clk.Advance(2 * time.Millisecond)
	if !e.storeClock {
		time.Sleep(L / 2)
	}
	if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("Recover at old deadline+1ms after a heartbeat took %+v, want nothing", r)
	}
	// Two more heartbeats, each half a lease apart: a job longer than its
	// lease is not taken while its worker is alive.
	for i := range 2 {
		lease, err = e.s.Extend(e.ctx, lease, L)
		if err != nil {
			e.t.Fatalf("heartbeat %d: Extend: %v", i+2, err)
		}
		if want := e.clk.Now().Add(L); !lease.Deadline.Equal(want) {
			e.t.Errorf("heartbeat %d: deadline %s, want %s", i+2, show(lease.Deadline), show(want))
		}
		e.idle(L / 2)
		if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
			e.t.Errorf("Recover after heartbeat %d took %+v, want nothing", i+2, r)
		}
	}
	e.wantStatus(id, jobstore.StatusInProgress)
	// Once the heartbeats stop, the lease expires and Recover takes the job.
	e.expire(L)
	if r := e.recover(10); !slices.Equal(r.Requeued, []string{id}) {
		e.t.Errorf("Recover after the last heartbeat expired = %+v, want Requeued [%s]", r, id)
	}
}

func caseExpiredLeaseStillCompletes(e *env) {
	// Fencing is by token alone: a lease past its deadline that no Recover
	// has taken still completes.
	id := e.id("late-complete")
	cl := e.enqueueClaim(jobstore.NewJob{ID: id, MaxRetries: 3}, e.lease)
	e.expire(e.lease)
	if err := e.s.Complete(e.ctx, cl.Lease, []byte("late")); err != nil {
		e.t.Fatalf("Complete with an expired but unrecovered lease: %v, want success", err)
	}
	j := e.wantStatus(id, jobstore.StatusCompleted)
	if string(j.Result) != "late" {
		e.t.Errorf("Result %q, want %q", j.Result, "late")
	}
	if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("Recover after the late Complete took %+v, want nothing", r)
	}

	// And an expired, unrecovered lease can still be extended.
	id2 := e.id("late-extend")
	cl = e.enqueueClaim(jobstore.NewJob{ID: id2, MaxRetries: 3}, e.lease)
	e.expire(e.lease)
	l, err := e.s.Extend(e.ctx, cl.Lease, e.lease)
	if err != nil {
		e.t.Fatalf("Extend with an expired but unrecovered lease: %v, want success", err)
	}
	if r := e.recover(10); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("Recover right after the late Extend took %+v, want nothing", r)
	}
	if err := e.s.Complete(e.ctx, l, nil); err != nil {
		e.t.Errorf("Complete after the late Extend: %v", err)
	}
}

func caseStaleCompleteAfterRecovery(e *env) {
	id := e.id("fence")
	a := e.enqueueClaim(jobstore.NewJob{ID: id, MaxRetries: 3}, e.lease)
	e.expire(e.lease)
	if r := e.recover(10); !slices.Equal(r.Requeued, []string{id}) {
		e.t.Fatalf("Recover = %+v, want Requeued [%s]", r, id)
	}
	b := e.claimOneAs("worker-b", id, holdLease)

	wantErrIs(e.t, e.s.Complete(e.ctx, a.Lease, []byte("result-A")), jobstore.ErrLeaseLost, "worker A's Complete after recovery")
	_, err := e.s.Fail(e.ctx, a.Lease, "A failed")
	wantErrIs(e.t, err, jobstore.ErrLeaseLost, "worker A's Fail after recovery")
	_, err = e.s.Extend(e.ctx, a.Lease, time.Minute)
	wantErrIs(e.t, err, jobstore.ErrLeaseLost, "worker A's Extend after recovery")
	j := e.wantStatus(id, jobstore.StatusInProgress)
	if j.LeaseToken != b.Lease.Token || j.WorkerID != "worker-b" {
		e.t.Errorf("after A's stale calls: LeaseToken %q WorkerID %q, want B's %q worker-b", j.LeaseToken, j.WorkerID, b.Lease.Token)
	}

	if err := e.s.Complete(e.ctx, b.Lease, []byte("result-B")); err != nil {
		e.t.Fatalf("worker B's Complete: %v", err)
	}
	wantErrIs(e.t, e.s.Complete(e.ctx, a.Lease, []byte("result-A")), jobstore.ErrLeaseLost, "worker A's Complete after B completed")
	j = e.wantStatus(id, jobstore.StatusCompleted)
	if string(j.Result) != "result-B" || j.LeaseToken != b.Lease.Token || j.WorkerID != "worker-b" {
		e.t.Errorf("final record: Result %q LeaseToken %q WorkerID %q, want result-B %q worker-b", j.Result, j.LeaseToken, j.WorkerID, b.Lease.Token)
	}
	if j.RetryCount != 1 {
		e.t.Errorf("final RetryCount %d, want 1", j.RetryCount)
	}
}

func caseFailBackoffRetriesDeadLetter(e *env) {
	id := e.id("retry")
	e.enqueue(jobstore.NewJob{ID: id, MaxRetries: 3})
	wantDelays := []time.Duration{backoffBase, 2 * backoffBase, 4 * backoffBase}
	for i := range 4 {
		cl := e.claimOne(id, holdLease)
		if cl.Job.RetryCount != i {
			e.t.Errorf("run %d: RetryCount %d, want %d", i+1, cl.Job.RetryCount, i)
		}
		now := e.clk.Now()
		reason := fmt.Sprintf("boom %d: \"quoted\" \\ \n\tZoë", i+1) // survives either encoding
		fr, err := e.s.Fail(e.ctx, cl.Lease, reason)
		if err != nil {
			e.t.Fatalf("Fail %d: %v", i+1, err)
		}
		if i < 3 {
			due := now.Add(wantDelays[i])
			if fr.Status != jobstore.StatusScheduled || !fr.RunAt.Equal(due) {
				e.t.Errorf("Fail %d = {%v %s}, want {Scheduled now+%v = %s}", i+1, fr.Status, show(fr.RunAt), wantDelays[i], show(due))
			}
			j := e.wantStatus(id, jobstore.StatusScheduled)
			if j.RetryCount != i+1 || !j.RunAt.Equal(due) || !j.RetryDelayUntil.Equal(due) || j.Error != reason {
				e.t.Errorf("after Fail %d: RetryCount %d RunAt %s RetryDelayUntil %s Error %q, want %d %s %s %q",
					i+1, j.RetryCount, show(j.RunAt), show(j.RetryDelayUntil), j.Error, i+1, show(due), show(due), reason)
			}
			e.clk.Set(due.Add(-time.Millisecond))
			e.claimNone(fmt.Sprintf("1ms before retry %d is due", i+1))
			e.clk.Set(due)
			continue
		}
		if fr.Status != jobstore.StatusFailed {
			e.t.Errorf("4th Fail with MaxRetries 3 = %v, want Failed (dead-lettered)", fr.Status)
		}
		j := e.wantStatus(id, jobstore.StatusFailed)
		if j.Error != reason {
			e.t.Errorf("dead job Error %q, want %q", j.Error, reason)
		}
	}
	if st := e.stats(); st.Dead != 1 || st.InProgress != 0 || st.Due+st.Delayed != 0 {
		e.t.Errorf("Stats after dead-lettering: %+v, want Dead 1 and nothing waiting", st)
	}
	e.clk.Advance(time.Hour)
	e.claimNone("an hour after the job was dead-lettered")

	// MaxRetries 0 dead-letters at the first failure.
	id0 := e.id("noretry")
	cl := e.enqueueClaim(jobstore.NewJob{ID: id0}, holdLease)
	if fr, err := e.s.Fail(e.ctx, cl.Lease, "once"); err != nil || fr.Status != jobstore.StatusFailed {
		e.t.Errorf("Fail with MaxRetries 0 = (%v, %v), want Failed", fr.Status, err)
	}
	e.wantStatus(id0, jobstore.StatusFailed)
	if st := e.stats(); st.Dead != 2 {
		e.t.Errorf("Stats.Dead %d, want 2", st.Dead)
	}

	// The delay doubles up to Backoff.Max and stays there.
	idc := e.id("cap")
	e.enqueue(jobstore.NewJob{ID: idc, MaxRetries: 5})
	capped := []time.Duration{1, 2, 4, 8, 8}
	for i, mult := range capped {
		cl := e.claimOne(idc, holdLease)
		now := e.clk.Now()
		fr, err := e.s.Fail(e.ctx, cl.Lease, "again")
		if err != nil {
			e.t.Fatalf("cap: Fail %d: %v", i+1, err)
		}
		if want := now.Add(mult * backoffBase); !fr.RunAt.Equal(want) {
			e.t.Errorf("cap: Fail %d RunAt now+%v, want now+%v (base %v, max %v)", i+1, fr.RunAt.Sub(now), mult*backoffBase, backoffBase, backoffMax)
		}
		e.clk.Set(fr.RunAt)
	}
}

func caseFailBackoffJitter(e *env) {
	const n = 10
	var delays []time.Duration
	for i := range n {
		cl := e.enqueueClaim(jobstore.NewJob{ID: e.id(fmt.Sprintf("jit%d", i)), MaxRetries: 2}, holdLease)
		now := e.clk.Now()
		fr, err := e.s.Fail(e.ctx, cl.Lease, "jitter")
		if err != nil {
			e.t.Fatalf("Fail: %v", err)
		}
		d := fr.RunAt.Sub(now)
		delays = append(delays, d)
		lo, hi := backoffBase/2, backoffBase*3/2
		if d < lo || d > hi {
			e.t.Errorf("jittered delay %v outside [%v, %v] (base %v, jitter 0.5)", d, lo, hi, backoffBase)
		}
	}
	if slices.Min(delays) == slices.Max(delays) {
		e.t.Errorf("all %d jittered delays equal %v: Jitter 0.5 ignored", n, delays[0])
	}
}

func caseConcurrentRecoverers(e *env) {
	const n, recoverers, max = 50, 8, 7
	var jobs []jobstore.NewJob
	for i := range n {
		jobs = append(jobs, jobstore.NewJob{ID: e.id(fmt.Sprintf("cr%02d", i)), MaxRetries: 3})
	}
	e.enqueue(jobs...)
	claimed := map[string]bool{}
	for len(claimed) < n {
		cl := e.claim(n, e.lease)
		if len(cl) == 0 {
			break
		}
		for _, c := range cl {
			claimed[c.Job.ID] = true
		}
	}
	if len(claimed) != n {
		e.t.Fatalf("claimed %d of %d jobs", len(claimed), n)
	}
	e.expire(e.lease)

	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for w := range recoverers {
		wg.Go(func() {
			for {
				r, err := e.s.Recover(e.ctx, max)
				if err != nil {
					e.t.Errorf("recoverer %d: Recover: %v", w, err)
					return
				}
				k := len(r.Requeued) + len(r.DeadLettered)
				if k == 0 {
					return
				}
				if k > max {
					e.t.Errorf("recoverer %d: Recover(%d) took %d jobs", w, max, k)
				}
				mu.Lock()
				for _, id := range append(r.Requeued, r.DeadLettered...) {
					seen[id]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for id, k := range seen {
		if k != 1 {
			e.t.Errorf("job %s recovered %d times, want exactly once", id, k)
		}
		if !claimed[id] {
			e.t.Errorf("Recover returned %s, which was never claimed", id)
		}
	}
	if len(seen) != n {
		e.t.Errorf("recoverers took %d distinct jobs, want %d", len(seen), n)
	}
	if r := e.recover(n); len(r.Requeued)+len(r.DeadLettered) != 0 {
		e.t.Errorf("a Recover after all recoverers stopped still took %d jobs (a recoverer saw an empty result early)", len(r.Requeued)+len(r.DeadLettered))
	}
	st := e.stats()
	if st.InProgress != 0 || st.Due+st.Delayed != n {
		e.t.Errorf("Stats after recovery: %+v, want InProgress 0 and %d waiting", st, n)
	}
	for _, nj := range jobs {
		if j := e.get(nj.ID); j.Status != jobstore.StatusScheduled || j.RetryCount != 1 {
			e.t.Errorf("job %s after recovery: Status %v RetryCount %d, want Scheduled 1", nj.ID, j.Status, j.RetryCount)
		}
	}
}

func caseRecoverDeadLettersPastLimit(e *env) {
	a, b := e.id("r0"), e.id("r1")
	e.enqueue(jobstore.NewJob{ID: a, MaxRetries: 0})
	e.claimOne(a, e.lease)
	e.enqueue(jobstore.NewJob{ID: b, MaxRetries: 1})
	e.claimOne(b, e.lease)
	e.expire(e.lease)
	r := e.recover(10)
	if !slices.Equal(r.DeadLettered, []string{a}) || !slices.Equal(r.Requeued, []string{b}) {
		e.t.Fatalf("Recover = %+v, want DeadLettered [%s] (MaxRetries 0) and Requeued [%s] (MaxRetries 1)", r, a, b)
	}
	if j := e.wantStatus(a, jobstore.StatusFailed); !strings.Contains(j.Error, "lease expired") {
		e.t.Errorf("dead-lettered job Error %q, want %q", j.Error, "lease expired")
	}
	if j := e.wantStatus(b, jobstore.StatusScheduled); j.RetryCount != 1 {
		e.t.Errorf("requeued job RetryCount %d, want 1", j.RetryCount)
	}
	e.claimOne(b, e.lease)
	e.expire(e.lease)
	if r := e.recover(10); !slices.Equal(r.DeadLettered, []string{b}) || len(r.Requeued) != 0 {
		e.t.Errorf("second Recover = %+v, want DeadLettered [%s]", r, b)
	}
	if j := e.wantStatus(b, jobstore.StatusFailed); !strings.Contains(j.Error, "lease expired") {
		e.t.Errorf("dead-lettered job Error %q, want %q", j.Error, "lease expired")
	}
	if st := e.stats(); st.Dead != 2 || st.InProgress != 0 || st.Due+st.Delayed != 0 {
		e.t.Errorf("Stats: %+v, want Dead 2 and nothing else", st)
	}
	e.clk.Advance(time.Hour)
	e.claimNone("after both jobs were dead-lettered")
}

func caseCancel(e *env) {
	now := e.clk.Now()
	inprog := e.enqueueClaim(jobstore.NewJob{ID: e.id("inprog")}, holdLease)
	done := e.enqueueClaim(jobstore.NewJob{ID: e.id("done")}, holdLease)
	if err := e.s.Complete(e.ctx, done.Lease, nil); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	sched := e.enqueueClaim(jobstore.NewJob{ID: e.id("sched"), MaxRetries: 2}, holdLease)
	if fr, err := e.s.Fail(e.ctx, sched.Lease, "retry me"); err != nil || fr.Status != jobstore.StatusScheduled {
		e.t.Fatalf("Fail = (%v, %v), want Scheduled", fr.Status, err)
	}
	queued, delayed := e.id("queued"), e.id("delayed")
	e.enqueue(jobstore.NewJob{ID: queued}, jobstore.NewJob{ID: delayed, RunAt: now.Add(10 * time.Second)})

	for _, c := range []struct{ what, id string }{{"queued", queued}, {"delayed", delayed}, {"scheduled retry", sched.Job.ID}} {
		if err := e.s.Cancel(e.ctx, c.id); err != nil {
			e.t.Errorf("Cancel %s job: %v", c.what, err)
		}
		e.wantStatus(c.id, jobstore.StatusCanceled)
	}
	before := e.get(inprog.Job.ID)
	wantErrIs(e.t, e.s.Cancel(e.ctx, inprog.Job.ID), jobstore.ErrNotCancelable, "Cancel in-progress job")
	if d := diffJob(before, e.get(inprog.Job.ID)); len(d) > 0 {
		e.t.Errorf("in-progress job changed by the refused Cancel: %v", d)
	}
	wantErrIs(e.t, e.s.Cancel(e.ctx, done.Job.ID), jobstore.ErrNotCancelable, "Cancel completed job")
	wantErrIs(e.t, e.s.Cancel(e.ctx, queued), jobstore.ErrNotCancelable, "Cancel an already canceled job")
	wantErrIs(e.t, e.s.Cancel(e.ctx, e.id("missing")), jobstore.ErrNotFound, "Cancel missing job")

	e.clk.Advance(time.Hour)
	e.claimNone("an hour after canceling the queued, delayed and scheduled jobs")
	if st := e.stats(); st.Due+st.Delayed != 0 || st.InProgress != 1 {
		e.t.Errorf("Stats after cancels: %+v, want nothing waiting and 1 in progress", st)
	}
	if err := e.s.Complete(e.ctx, inprog.Lease, nil); err != nil {
		e.t.Errorf("Complete of the job whose Cancel was refused: %v", err)
	}
}

func caseStatsAgree(e *env) {
	now := e.clk.Now()
	if st := e.stats(); st != (jobstore.Stats{}) {
		e.t.Errorf("Stats of a new queue: %+v, want all zero", st)
	}
	e.enqueueClaim(jobstore.NewJob{ID: e.id("ip1")}, holdLease)
	e.enqueueClaim(jobstore.NewJob{ID: e.id("ip2")}, holdLease)
	dead := e.enqueueClaim(jobstore.NewJob{ID: e.id("dead")}, holdLease)
	if _, err := e.s.Fail(e.ctx, dead.Lease, "x"); err != nil {
		e.t.Fatal(err)
	}
	retry := e.enqueueClaim(jobstore.NewJob{ID: e.id("retry"), MaxRetries: 2}, holdLease)
	if _, err := e.s.Fail(e.ctx, retry.Lease, "x"); err != nil { // due at now+1s: delayed
		e.t.Fatal(err)
	}
	for _, p := range []string{"c1", "c2"} {
		c := e.enqueueClaim(jobstore.NewJob{ID: e.id(p)}, holdLease)
		if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
			e.t.Fatal(err)
		}
	}
	canceled := e.id("canceled")
	e.enqueue(jobstore.NewJob{ID: canceled, RunAt: now.Add(time.Hour)})
	if err := e.s.Cancel(e.ctx, canceled); err != nil {
		e.t.Fatal(err)
	}
	e.enqueue(
		jobstore.NewJob{ID: e.id("due"), RunAt: now.Add(-time.Second)},
		jobstore.NewJob{ID: e.id("due")},
		jobstore.NewJob{ID: e.id("due"), RunAt: now},
		jobstore.NewJob{ID: e.id("later"), RunAt: now.Add(30 * time.Minute)},
		jobstore.NewJob{ID: e.id("later"), RunAt: now.Add(time.Hour)},
	)
	check := func(when string, due, delayed int64) {
		e.t.Helper()
		st := e.stats()
		want := jobstore.Stats{Due: due, Delayed: delayed, InProgress: 2, Dead: 1, Completed: 2}
		if e.caps.Has(jobstore.CapExactStats) {
			if st != want {
				e.t.Errorf("%s: Stats %+v, want %+v", when, st, want)
			}
			return
		}
		if st.Due+st.Delayed != due+delayed || st.InProgress != 2 || st.Dead != 1 || st.Completed != 2 {
			e.t.Errorf("%s: Stats %+v, want Due+Delayed %d, InProgress 2, Dead 1, Completed 2", when, st, due+delayed)
		}
	}
	check("at start", 3, 3)
	e.clk.Advance(time.Second)
	check("1s later (retry due)", 4, 2)
	e.clk.Advance(time.Hour)
	check("1h later (all due)", 6, 0)
}

func caseDuplicateID(e *env) {
	id := e.id("dup")
	e.enqueue(jobstore.NewJob{ID: id, Name: "first", Payload: []byte("first"), MaxRetries: 2})
	before := e.get(id)
	err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Name: "second", Payload: []byte("second"), RunAt: e.clk.Now().Add(time.Hour)})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "second Enqueue of a queued id")
	if d := diffJob(before, e.get(id)); len(d) > 0 {
		e.t.Errorf("first job changed by the duplicate Enqueue: %v", d)
	}
	if st := e.stats(); st.Due+st.Delayed != 1 {
		e.t.Errorf("Stats after the duplicate: %+v, want 1 waiting", st)
	}
	cl := e.claimOne(id, holdLease)
	if string(cl.Job.Payload) != "first" {
		e.t.Errorf("claimed payload %q, want %q", cl.Job.Payload, "first")
	}
	err = e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Payload: []byte("second")})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "Enqueue of an in-progress id")
	if err := e.s.Complete(e.ctx, cl.Lease, []byte("r")); err != nil {
		e.t.Fatal(err)
	}
	before = e.get(id)
	err = e.s.Enqueue(e.ctx, jobstore.NewJob{ID: id, Payload: []byte("third")})
	wantErrIs(e.t, err, jobstore.ErrDuplicateID, "Enqueue of a completed id still in the store")
	if d := diffJob(before, e.get(id)); len(d) > 0 {
		e.t.Errorf("completed job changed by the duplicate Enqueue: %v", d)
	}
	e.claimNone("after duplicates of a completed job were refused")
}

func caseBadInput(e *env) {
	good := e.id("good")
	e.enqueue(jobstore.NewJob{ID: good})
	badNeg, badBig := e.id("neg"), e.id("big")
	claim := func(max int, lease time.Duration) error {
		_, err := e.s.Claim(e.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: lease})
		return err
	}
	badOpts := e.opts
	badOpts.Queue = "bad queue!"
	for _, tc := range []struct {
		name  string
		field string // regexp the message must match (case-insensitive)
		call  func() error
	}{
		{"Enqueue empty ID", `\bid\b`, func() error { return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: ""}) }},
		{"Enqueue negative MaxRetries", `max.?retries`, func() error { return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: badNeg, MaxRetries: -1}) }},
		{"Enqueue payload over MaxPayload", `payload`, func() error {
			return e.s.Enqueue(e.ctx, jobstore.NewJob{ID: badBig, Payload: bytes.Repeat([]byte("x"), maxPayload+1)})
		}},
		{"Claim Max 0", `\bmax\b`, func() error { return claim(0, holdLease) }},
		{"Claim Max -1", `\bmax\b`, func() error { return claim(-1, holdLease) }},
		{"Claim Lease 0", `\blease\b`, func() error { return claim(1, 0) }},
		{"Claim Lease -1s", `\blease\b`, func() error { return claim(1, -time.Second) }},
		{"Get empty ID", `\bid\b`, func() error { _, err := e.s.Get(e.ctx, ""); return err }},
		{"New bad Queue", `queue`, func() error {
			s, err := e.backend.New(e.ctx, e.client, badOpts)
			if err == nil {
				_ = s.Close()
			}
			return err
		}},
	} {
		e.t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, jobstore.ErrInvalid) {
				t.Fatalf("%s: err = %v, want errors.Is(err, ErrInvalid)", tc.name, err)
			}
			if !regexp.MustCompile(`(?i)` + tc.field).MatchString(err.Error()) {
				t.Errorf("%s: message %q does not name the field (want match for %q)", tc.name, err.Error(), tc.field)
			}
		})
	}
	e.wantMissing(badNeg, "job rejected for negative MaxRetries")
	e.wantMissing(badBig, "job rejected for its payload size")
	exact := e.id("exact")
	if err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: exact, Payload: bytes.Repeat([]byte("x"), maxPayload)}); err != nil {
		e.t.Errorf("Enqueue of a payload of exactly MaxPayload (%d) bytes: %v", maxPayload, err)
	}
	// The refused claims took nothing.
	if got := ids(e.claim(10, holdLease)); !sameSet(got, []string{good, exact}) {
		e.t.Errorf("Claim after the refused calls got %v, want [%s %s]", got, good, exact)
	}
}

// roundTripJob is a job with every NewJob field set; payload and result are
// arbitrary bytes, or UTF-8 text for the JSON encoding.
func roundTripJob(e *env) (jobstore.NewJob, []byte) {
	payload := make([]byte, 0, 300)
	for i := range 256 {
		payload = append(payload, byte(i))
	}
	payload = append(payload, "\r\n\x00\xff\xfe end"...)
	result := []byte("\x00\x01res\xff\r\n")
	if e.opts.Encoding == jobstore.EncodingJSON {
		payload = []byte("{\"k\": \"v \\\" q\"}\n\ttab \x00 nul, Zoë 日本 🚀 <>&'")
		result = []byte("résultat \"quoted\" \\ \x00 🚀")
	}
	return jobstore.NewJob{
		ID:         e.id("rt"),
		Name:       "orders.create",
		Payload:    payload,
		RunAt:      e.clk.Now().Add(-1500 * time.Millisecond),
		MaxRetries: 7,
		Headers: map[string][]string{
			"Accept":       {"application/json"},
			"X-Multi":      {"a,b", "c: d", "e=f;g"},
			"X-Empty":      {""},
			"X-Unicode-ü":  {"Zoë 日本"},
			"Content-Type": {"text/plain; charset=utf-8"},
		},
		RouteParams: map[string]string{"id": "42", "name": "Zoë/ü", "empty": ""},
		QueryParams: map[string][]string{"q": {"a b", "c&d=e"}, "page": {"2"}, "tag": {"x", "y", "z"}},
	}, result
}

func roundTrip(e *env) {
	nj, result := roundTripJob(e)
	t0 := e.clk.Now()
	e.enqueue(nj)
	j := e.get(nj.ID)
	if d := diffNewJob(j, nj); len(d) > 0 {
		e.t.Errorf("Get after Enqueue lost fields: %v", d)
	}
	if j.Status != jobstore.StatusQueued || j.RetryCount != 0 || !j.CreatedAt.Equal(t0) {
		e.t.Errorf("Get after Enqueue: Status %v RetryCount %d CreatedAt %s, want Queued 0 %s", j.Status, j.RetryCount, show(j.CreatedAt), show(t0))
	}

	e.clk.Advance(250 * time.Millisecond)
	t1 := e.clk.Now()
	cl := e.claimOneAs("rt-worker", nj.ID, holdLease)
	if d := diffNewJob(cl.Job, nj); len(d) > 0 {
		e.t.Errorf("claimed job lost fields: %v", d)
	}
	l := cl.Lease
	if l.JobID != nj.ID || l.Token == "" || !l.Deadline.Equal(t1.Add(holdLease)) {
		e.t.Errorf("lease %+v, want JobID %s, a token, Deadline %s", l, nj.ID, show(t1.Add(holdLease)))
	}
	cj := cl.Job
	if cj.Status != jobstore.StatusInProgress || cj.WorkerID != "rt-worker" || !cj.StartedAt.Equal(t1) ||
		cj.LeaseToken != l.Token || !cj.LeaseDeadline.Equal(l.Deadline) || !cj.CreatedAt.Equal(t0) {
		e.t.Errorf("claimed record: Status %v WorkerID %q StartedAt %s LeaseToken %q LeaseDeadline %s CreatedAt %s; want InProgress rt-worker %s %q %s %s",
			cj.Status, cj.WorkerID, show(cj.StartedAt), cj.LeaseToken, show(cj.LeaseDeadline), show(cj.CreatedAt),
			show(t1), l.Token, show(l.Deadline), show(t0))
	}
	if d := diffJob(cj, e.get(nj.ID), "Ref"); len(d) > 0 {
		e.t.Errorf("Claimed.Job differs from Get after claim: %v", d)
	}

	e.clk.Advance(2 * time.Second)
	t2 := e.clk.Now()
	if err := e.s.Complete(e.ctx, l, result); err != nil {
		e.t.Fatalf("Complete: %v", err)
	}
	j = e.get(nj.ID)
	if d := diffNewJob(j, nj); len(d) > 0 {
		e.t.Errorf("completed record lost fields: %v", d)
	}
	if j.Status != jobstore.StatusCompleted || !bytes.Equal(j.Result, result) || !j.CompletedAt.Equal(t2) {
		e.t.Errorf("completed record: Status %v Result %s CompletedAt %s, want Completed %s %s",
			j.Status, show(j.Result), show(j.CompletedAt), show(result), show(t2))
	}

	// A zero RunAt means now.
	zero := e.id("rt-zero")
	e.enqueue(jobstore.NewJob{ID: zero})
	if j := e.get(zero); !j.RunAt.Equal(t2) || j.Status != jobstore.StatusQueued {
		e.t.Errorf("job enqueued with zero RunAt: RunAt %s Status %v, want %s Queued", show(j.RunAt), j.Status, show(t2))
	}
	if err := e.s.Complete(e.ctx, e.claimOne(zero, holdLease).Lease, nil); err != nil {
		e.t.Fatalf("Complete(%s): %v", zero, err)
	}
	_, err := e.s.Get(e.ctx, e.id("missing"))
	wantErrIs(e.t, err, jobstore.ErrNotFound, "Get of a missing id")
}

func caseGetRoundTrip(e *env) { roundTrip(e) }

// caseEncodingJSON reruns every encoding-dependent case with
// Options.Encoding = EncodingJSON, each on a fresh store, as subtests
// EncodingJSON/<Case>; then checks what only JSON has: non-UTF-8 payloads.
func caseEncodingJSON(e *env) {
	for _, tc := range suite() {
		if tc.noEncoding {
			continue
		}
		e.t.Run(tc.name, func(t *testing.T) { runCase(t, e.backend, e.client, e.target, tc, useJSON) })
	}
	e.t.Run("NonUTF8Payload", func(t *testing.T) {
		sub := *e
		sub.t = t
		caseNonUTF8Payload(&sub)
	})
}

func caseNonUTF8Payload(e *env) {
	// A payload that is not UTF-8: refused as invalid, or kept exactly; never mangled.
	bad := e.id("json-binary")
	raw := []byte{0xff, 0xfe, 0x00, 'a', 0xc3}
	if utf8.Valid(raw) {
		e.t.Fatal("test payload is valid UTF-8")
	}
	err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: bad, Payload: raw})
	switch {
	case errors.Is(err, jobstore.ErrInvalid):
		if !strings.Contains(strings.ToLower(err.Error()), "payload") {
			e.t.Errorf("non-UTF-8 payload refused with %q, which does not name the payload", err)
		}
	case err != nil:
		e.t.Errorf("Enqueue of a non-UTF-8 payload under JSON: %v, want success or ErrInvalid", err)
	default:
		if j := e.get(bad); !bytes.Equal(j.Payload, raw) {
			e.t.Errorf("non-UTF-8 payload accepted but read back as %q, want %q (refuse it or keep it)", j.Payload, raw)
		}
	}
}

// moverLoop runs Promote every 10ms until stop is closed, when the store is a Mover.
func (e *env) moverLoop() (stop func()) {
	if e.mover == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = e.promote(e.ctx)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// waitWakes runs a Claim with Wait on an empty queue, enqueues a job after
// 300ms, and returns how long after the Enqueue the Claim returned.
func (e *env) waitWakes(wait time.Duration) (latency time.Duration, got []string) {
	e.t.Helper()
	stop := e.moverLoop()
	defer stop()
	type res struct {
		cl  []jobstore.Claimed
		err error
		at  time.Time
	}
	ch := make(chan res, 1)
	ctx, cancel := context.WithTimeout(e.ctx, wait+3*time.Second)
	defer cancel()
	go func() {
		cl, err := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "waiter", Max: 1, Lease: holdLease, Wait: wait})
		ch <- res{cl, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond)
	id := e.id("wake")
	enqAt := time.Now()
	e.enqueue(jobstore.NewJob{ID: id})
	r := <-ch
	if r.err != nil {
		e.t.Fatalf("Claim(Wait %v): %v", wait, r.err)
	}
	if got := ids(r.cl); !slices.Equal(got, []string{id}) {
		e.t.Fatalf("Claim(Wait %v) returned %v, want the job enqueued during the wait [%s]", wait, got, id)
	}
	return r.at.Sub(enqAt), ids(r.cl)
}

// waitEmpty runs a Claim with Wait on an empty queue and checks it returns
// nothing, without error, after about Wait.
func (e *env) waitEmpty(wait time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, wait+3*time.Second)
	defer cancel()
	start := time.Now()
	cl, err := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "waiter", Max: 1, Lease: holdLease, Wait: wait})
	el := time.Since(start)
	if err != nil || len(cl) != 0 {
		e.t.Errorf("Claim(Wait %v) on an empty queue = (%v, %v), want empty, no error", wait, ids(cl), err)
	}
	if el < wait*3/4 || el > wait+800*time.Millisecond {
		e.t.Errorf("Claim(Wait %v) on an empty queue returned after %v, want about %v", wait, el.Round(time.Millisecond), wait)
	}
}

func caseBlockingClaimWakes(e *env) {
	lat, _ := e.waitWakes(2 * time.Second)
	if lat > 500*time.Millisecond {
		e.t.Errorf("blocking Claim returned %v after the Enqueue, want < 500ms", lat.Round(time.Millisecond))
	}
	e.t.Logf("blocking claim woke %v after the enqueue", lat.Round(time.Millisecond))
	e.waitEmpty(200 * time.Millisecond)
}

func caseClaimWaitPolls(e *env) {
	const wait = 1500 * time.Millisecond
	lat, _ := e.waitWakes(wait)
	if limit := e.opts.PollInterval + 500*time.Millisecond; lat > limit {
		e.t.Errorf("Claim(Wait %v, PollInterval %v) returned %v after the Enqueue, want < %v", wait, e.opts.PollInterval, lat.Round(time.Millisecond), limit)
	}
	e.waitEmpty(200 * time.Millisecond)
	// A context deadline shorter than Wait wins.
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	cl, _ := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "waiter", Max: 1, Lease: holdLease, Wait: 5 * time.Second})
	if el := time.Since(start); el > time.Second || len(cl) != 0 {
		e.t.Errorf("Claim(Wait 5s) under a 200ms context returned %v after %v, want nothing within ~200ms", ids(cl), el.Round(time.Millisecond))
	}
}

const retention = 500 * time.Millisecond

func caseCompletedExpires(e *env) {
	done := e.enqueueClaim(jobstore.NewJob{ID: e.id("exp-done")}, holdLease)
	if err := e.s.Complete(e.ctx, done.Lease, []byte("r")); err != nil {
		e.t.Fatal(err)
	}
	dead := e.enqueueClaim(jobstore.NewJob{ID: e.id("exp-dead")}, holdLease)
	if _, err := e.s.Fail(e.ctx, dead.Lease, "x"); err != nil {
		e.t.Fatal(err)
	}
	canceled := e.id("exp-canceled")
	e.enqueue(jobstore.NewJob{ID: canceled, RunAt: e.clk.Now().Add(time.Hour)})
	if err := e.s.Cancel(e.ctx, canceled); err != nil {
		e.t.Fatal(err)
	}
	start := time.Now()
	live := e.id("exp-live")
	e.enqueue(jobstore.NewJob{ID: live, RunAt: e.clk.Now().Add(time.Hour)})
	finished := map[string]jobstore.Status{done.Job.ID: jobstore.StatusCompleted, dead.Job.ID: jobstore.StatusFailed, canceled: jobstore.StatusCanceled}
	for id, st := range finished {
		e.wantStatus(id, st) // still readable right away
	}
	deadline := start.Add(retention + 2500*time.Millisecond)
	for len(finished) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		for id := range finished {
			if _, err := e.s.Get(e.ctx, id); errors.Is(err, jobstore.ErrNotFound) {
				delete(finished, id)
			}
		}
	}
	for id, st := range finished {
		e.t.Errorf("%v record %s still readable %v after it finished (Retention %v)", st, id, time.Since(start).Round(time.Millisecond), retention)
	}
	e.wantStatus(live, jobstore.StatusQueued) // Retention never expires a waiting job
	if st := e.stats(); st.Completed != 1 {
		e.t.Errorf("Stats.Completed %d after the record expired, want 1 (counts completions, not records)", st.Completed)
	}
}

func caseRedisUnreachable(e *env) {
	const callTimeout, maxReturn = 300 * time.Millisecond, 2 * time.Second
	var acked []string
	for i := range 5 {
		id := e.id(fmt.Sprintf("ack%d", i))
		e.enqueue(jobstore.NewJob{ID: id, MaxRetries: 5})
		acked = append(acked, id)
	}
	held := e.claimOne(acked[0], e.lease)

	rs := e.target.Redis
	if err := rs.Pause(); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	resume := sync.OnceFunc(func() {
		if err := rs.Resume(); err != nil {
			e.t.Errorf("Resume: %v", err)
		}
	})
	e.t.Cleanup(resume)
	defer resume()

	call := func(what string, f func(ctx context.Context) error) {
		e.t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
		defer cancel()
		ch := make(chan error, 1)
		start := time.Now()
		go func() {
			defer func() {
				if p := recover(); p != nil {
					ch <- fmt.Errorf("panic: %v", p)
				}
			}()
			ch <- f(ctx)
		}()
		select {
		case err := <-ch:
			el := time.Since(start)
			if err == nil {
				e.t.Errorf("%s while Redis is paused: no error after %v", what, el.Round(time.Millisecond))
			} else if strings.HasPrefix(err.Error(), "panic: ") {
				e.t.Errorf("%s while Redis is paused: %v", what, err)
			}
			if el > maxReturn {
				e.t.Errorf("%s while Redis is paused returned after %v, want < %v (context deadline %v)", what, el.Round(time.Millisecond), maxReturn, callTimeout)
			}
			e.t.Logf("%s while paused: %v after %v", what, err, el.Round(time.Millisecond))
		case <-time.After(5 * time.Second):
			e.t.Errorf("%s while Redis is paused hung for 5s (context deadline %v)", what, callTimeout)
		}
	}
	call("Enqueue", func(ctx context.Context) error {
		return e.s.Enqueue(ctx, jobstore.NewJob{ID: e.id("during-pause")})
	})
	call("Claim", func(ctx context.Context) error {
		_, err := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "paused", Max: 2, Lease: e.lease})
		return err
	})
	call("Complete", func(ctx context.Context) error { return e.s.Complete(ctx, held.Lease, []byte("r")) })
	call("Stats", func(ctx context.Context) error { _, err := e.s.Stats(ctx); return err })
	resume()

	// The same store works on once Redis is back.
	start := time.Now()
	var err error
	for time.Since(start) < 10*time.Second {
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		_, err = e.s.Stats(ctx)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		e.t.Fatalf("Stats still failing %v after Resume: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if back := time.Since(start); back > time.Second {
		e.t.Logf("store answered again %v after Resume", back.Round(time.Millisecond))
	}

	// Every job acknowledged before the pause is still there and completes.
	// Calls sent during the pause may have run late (a Complete, a Claim
	// whose reply was lost), so finish what is left, recovering if needed.
	if err := e.s.Complete(e.ctx, held.Lease, []byte("r")); err != nil {
		if j := e.get(held.Job.ID); j.Status != jobstore.StatusCompleted {
			e.t.Errorf("Complete of the lease held across the pause: %v (job %v)", err, j.Status)
		}
	}
	for round := 0; round < 3; round++ {
		for {
			cl := e.claim(10, e.lease)
			if len(cl) == 0 {
				break
			}
			for _, c := range cl {
				if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
					e.t.Errorf("Complete(%s) after the pause: %v", c.Job.ID, err)
				}
			}
		}
		if e.stats().InProgress == 0 {
			break
		}
		e.expire(e.lease) // a Claim sent during the pause ran late: take those jobs back
		e.recover(100)
	}
	for _, id := range acked {
		e.wantStatus(id, jobstore.StatusCompleted)
	}
}
