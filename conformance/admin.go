package conformance

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// adminCases: the declared capabilities, retries with backoff and
// dead-lettering, Cancel and Stats.
func adminCases() []testCase {
	return []testCase{
		{name: "Capabilities", noEncoding: true, fn: caseCapabilities},
		{name: "FailBackoffRetriesDeadLetter", needs: needs(jobstore.CapRetries, jobstore.CapStoreClock), fn: caseFailBackoffRetriesDeadLetter},
		{name: "FailBackoffJitter", needs: needs(jobstore.CapRetries, jobstore.CapStoreClock),
			opts: func(o *jobstore.Options) { o.Backoff.Jitter = 0.5; o.Seed = 7 }, fn: caseFailBackoffJitter},
		{name: "Cancel", needs: needs(jobstore.CapCancel, jobstore.CapRetries, jobstore.CapDelayedJobs), fn: caseCancel},
		{name: "StatsAgree", needs: needs(jobstore.CapRetries, jobstore.CapDelayedJobs, jobstore.CapCancel), fn: caseStatsAgree},
		{name: "Locate", fn: caseLocate},
	}
}

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
	for _, dep := range [][2]jobstore.Capability{
		{jobstore.CapStoreClockLeases, jobstore.CapLeaseRecovery},
		{jobstore.CapNativeDelay, jobstore.CapDelayedJobs},
	} {
		if e.caps.Has(dep[0]) && !e.caps.Has(dep[1]) {
			e.t.Errorf("declares %q without %q, which it refines", dep[0], dep[1])
		}
	}
	if e.caps.Has(jobstore.CapMoverLoop) && e.mover == nil {
		e.t.Errorf("declares %q but does not implement jobstore.Mover", jobstore.CapMoverLoop)
	}
	if e.caps.Has(jobstore.CapMover) != (e.mover != nil) {
		e.t.Errorf("declares %q = %v but implements jobstore.Mover = %v", jobstore.CapMover, e.caps.Has(jobstore.CapMover), e.mover != nil)
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
		if e.has(jobstore.CapExactStats, jobstore.CapStoreClock) { // exact on the manual clock
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

// caseLocate: a store that implements jobstore.Locator (the harness's
// read-back after a run) says of every job where it sits: waiting or
// delayed in its index, held under a lease, finished, or not there. A job
// a claim, a mover or Recover will reach is reachable in every state the
// contract gives it.
func caseLocate(e *env) {
	loc, ok := e.s.(jobstore.Locator)
	if !ok {
		e.t.Skipf("%s does not implement jobstore.Locator (the read-back falls back to Stats)", e.backend.Name)
	}
	due, later, done, gone := e.id("loc-due"), e.id("loc-later"), e.id("loc-done"), e.id("loc-none")
	want := func(when string, id string, found bool, st jobstore.Status, reach bool) {
		e.t.Helper()
		got, err := loc.Locate(e.ctx, []string{id})
		if err != nil || len(got) != 1 {
			e.t.Fatalf("%s: Locate(%s) = %v, %v", when, id, got, err)
		}
		if l := got[0]; l.Found != found || found && (l.Status != st || l.Reachable != reach) {
			e.t.Errorf("%s: Locate(%s) = %+v, want found %v status %v reachable %v", when, id, l, found, st, reach)
		}
	}
	e.enqueue(jobstore.NewJob{ID: done})
	want("enqueued", done, true, jobstore.StatusQueued, true)
	want("never enqueued", gone, false, 0, false)
	c := e.claimOne(done, holdLease)
	// A store without lease recovery leaves a claimed job in no index:
	// only its worker can finish it (a seed variant's flaw).
	want("claimed", done, true, jobstore.StatusInProgress, e.has(jobstore.CapLeaseRecovery))
	if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
		e.t.Fatal(err)
	}
	want("completed", done, true, jobstore.StatusCompleted, true)
	e.enqueue(jobstore.NewJob{ID: due, MaxRetries: 2})
	if e.has(jobstore.CapDelayedJobs) {
		e.enqueue(jobstore.NewJob{ID: later, RunAt: e.clk.Now().Add(time.Hour)})
		want("enqueued for an hour later", later, true, jobstore.StatusQueued, true)
	}
	c = e.claimOne(due, e.lease)
	if e.has(jobstore.CapRetries) {
		if _, err := e.s.Fail(e.ctx, c.Lease, "boom"); err != nil {
			e.t.Fatal(err)
		}
		want("failed with a retry ahead", due, true, jobstore.StatusScheduled, true)
		e.clk.Advance(backoffMax)
		e.claimOne(due, e.lease)
	}
	if e.has(jobstore.CapLeaseRecovery) {
		e.expire(e.lease)
		want("lease expired, not yet recovered", due, true, jobstore.StatusInProgress, true)
		e.recover(10)
		want("recovered", due, true, jobstore.StatusScheduled, true)
	}
	// Many ids in one call, in order.
	got, err := loc.Locate(e.ctx, []string{gone, done, gone})
	if err != nil || len(got) != 3 || got[0].Found || !got[1].Found || got[2].Found {
		e.t.Errorf("Locate of three ids = %+v, %v: want not found, found, not found", got, err)
	}
}
