package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// claimCases: claim order, due times, concurrent and waiting claims.
func claimCases() []testCase {
	return []testCase{
		{name: "FIFOEqualRunAt", needs: needs(jobstore.CapStrictFIFO), fn: caseFIFOEqualRunAt},
		{name: "NeverBeforeRunAt", needs: needs(jobstore.CapDelayedJobs, jobstore.CapStoreClock), fn: caseNeverBeforeRunAt},
		{name: "ConcurrentClaimers", fn: caseConcurrentClaimers},
		{name: "BlockingClaimWakes", needs: needs(jobstore.CapBlockingClaim), noEncoding: true, fn: caseBlockingClaimWakes},
		{name: "ClaimWaitPolls", noEncoding: true, fn: caseClaimWaitPolls},
	}
}

func caseFIFOEqualRunAt(e *env) {
	e.fifoEqualRunAt("RunAt zero", 0)
	// A common future RunAt keeps enqueue order too, once due.
	e.part("RunAtFuture", needs(jobstore.CapDelayedJobs, jobstore.CapStoreClock), func(e *env) {
		e.fifoEqualRunAt("RunAt now+1.5s", 1500*time.Millisecond)
	})
}

// fifoEqualRunAt enqueues 20 jobs due at now+delay (delay 0: RunAt left
// zero, which means now) and expects them claimed in enqueue order.
func (e *env) fifoEqualRunAt(name string, delay time.Duration) {
	e.t.Helper()
	want := nonSortedIDs(20)
	var runAt time.Time
	if delay > 0 {
		runAt = e.clk.Now().Add(delay)
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
	e.clk.Advance(delay)
	var got []string
	for len(got) <= len(want) {
		cl := e.claim(3, holdLease)
		if len(cl) == 0 {
			break
		}
		got = append(got, ids(cl)...)
	}
	if !slices.Equal(got, want) {
		e.t.Errorf("%s: claim order\n got %v\nwant %v (enqueue order)", name, got, want)
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
	e.claimOne(late, holdLease)
	if j := e.get(late); !j.RunAt.Equal(now.Add(5 * time.Second)) {
		e.t.Errorf("claimed job RunAt %s, want %s", show(j.RunAt), show(now.Add(5*time.Second)))
	}

	// Ordering across RunAts, with millisecond precision: a store that
	// sees only part of the queue in one Claim (a shard) cannot promise it.
	e.part("QueueOrder", needs(jobstore.CapQueueOrder), caseRunAtOrder)
}

func caseRunAtOrder(e *env) {
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
	if e.has(jobstore.CapClaimConflicts) {
		e.t.Skipf("%s declares %s: its concurrent claimers race for the head job and get conflict errors", e.backend.Name, jobstore.CapClaimConflicts)
	}
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
	e.enqueue(jobstore.NewJob{ID: id, Name: "woken", Payload: []byte("p\nq")})
	r := <-ch
	if r.err != nil {
		e.t.Fatalf("Claim(Wait %v): %v", wait, r.err)
	}
	if got := ids(r.cl); !slices.Equal(got, []string{id}) {
		e.t.Fatalf("Claim(Wait %v) returned %v, want the job enqueued during the wait [%s]", wait, got, id)
	}
	// A job a waiting claim gets (handed over by the enqueue, in the
	// blocking backends) is claimed as any other: its view is the record's,
	// and its lease completes it.
	cj := r.cl[0].Job
	if cj.Name != "woken" || string(cj.Payload) != "p\nq" || cj.WorkerID != "waiter" || cj.LeaseToken != r.cl[0].Lease.Token {
		e.t.Errorf("woken claim's job: Name %q Payload %q WorkerID %q token %q; want woken, %q, waiter, the lease's %q",
			cj.Name, cj.Payload, cj.WorkerID, cj.LeaseToken, "p\nq", r.cl[0].Lease.Token)
	}
	// (A store whose leases live in its peer's own bookkeeping, asynq's,
	// shows no claim in Get.)
	if d := diffClaimed(cj, e.get(id)); e.has(jobstore.CapStoreClockLeases) && len(d) > 0 {
		e.t.Errorf("woken claim's Claimed.Job differs from Get: %v", d)
	}
	if err := e.s.Complete(e.ctx, r.cl[0].Lease, nil); err != nil {
		e.t.Errorf("Complete of the woken claim's job: %v", err)
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
