package conformance

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// leaseCases: leases, heartbeats, fencing and recovery.
func leaseCases() []testCase {
	recovery := jobstore.CapLeaseRecovery
	return []testCase{
		{name: "LeaseExpiryRecover", needs: needs(recovery, jobstore.CapFencing, jobstore.CapStoreClock), fn: caseLeaseExpiryRecover},
		{name: "HeartbeatPreventsRecovery", needs: needs(recovery, jobstore.CapStoreClock), fn: caseHeartbeatPreventsRecovery},
		{name: "ExpiredLeaseStillCompletes", needs: needs(recovery), fn: caseExpiredLeaseStillCompletes},
		{name: "StaleCompleteAfterRecovery", needs: needs(recovery, jobstore.CapFencing), fn: caseStaleCompleteAfterRecovery},
		{name: "ConcurrentRecoverers", needs: needs(recovery), fn: caseConcurrentRecoverers},
		{name: "RecoverDeadLettersPastLimit", needs: needs(recovery), fn: caseRecoverDeadLettersPastLimit},
		{name: "BatchComplete", needs: needs(recovery, jobstore.CapFencing, jobstore.CapRetries, jobstore.CapStoreClock), fn: caseBatchComplete},
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
	if !e.clockLeases {
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
	if !e.clockLeases {
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

func caseConcurrentRecoverers(e *env) {
	const n, recoverers, max = 50, 8, 7
	var jobs []jobstore.NewJob
	for i := range n {
		jobs = append(jobs, jobstore.NewJob{ID: e.id(fmt.Sprintf("cr%02d", i)), MaxRetries: 3})
	}
	e.enqueue(jobs...)
	claimed := e.claimAll(n, e.lease)
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
