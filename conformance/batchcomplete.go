package conformance

import (
	"errors"

	"github.com/aebench/aebench/jobstore"
)

// caseBatchComplete acknowledges valid and fenced leases together through
// jobstore.CompleteAll (one CompleteMany call on a store that declares
// batch-complete, one Complete each otherwise): each valid lease completes,
// each fenced one (recovered after expiry, failed into a retry, forged,
// already completed earlier in the same batch) gets ErrLeaseLost and
// changes nothing, an invalid one gets ErrInvalid.
func caseBatchComplete(e *env) {
	_, isBatch := e.s.(jobstore.BatchCompleter)
	if e.caps.Has(jobstore.CapBatchComplete) != isBatch {
		e.t.Errorf("declares %q = %v but implements jobstore.BatchCompleter = %v",
			jobstore.CapBatchComplete, e.caps.Has(jobstore.CapBatchComplete), isBatch)
	}
	recovered, failed, ok1, ok2 := e.id("bc-recovered"), e.id("bc-failed"), e.id("bc-ok1"), e.id("bc-ok2")
	e.enqueue(jobstore.NewJob{ID: recovered, MaxRetries: 2})
	expiring := e.claimOne(recovered, e.lease)
	e.enqueue(jobstore.NewJob{ID: failed, MaxRetries: 2}, jobstore.NewJob{ID: ok1}, jobstore.NewJob{ID: ok2})
	held := e.claim(3, holdLease)
	if !e.has(jobstore.CapQueueOrder) {
		held = inOrder(held, failed, ok1, ok2)
	}
	if got := ids(held); len(got) != 3 || got[0] != failed || got[1] != ok1 || got[2] != ok2 {
		e.t.Fatalf("Claim returned %v, want [%s %s %s]", got, failed, ok1, ok2)
	}
	if _, err := e.s.Fail(e.ctx, held[0].Lease, "boom"); err != nil {
		e.t.Fatalf("Fail(%s): %v", failed, err)
	}
	e.expire(e.lease)
	if r := e.recover(10); len(r.Requeued) != 1 || r.Requeued[0] != recovered {
		e.t.Fatalf("Recover = %+v, want %s requeued", r, recovered)
	}
	completedBefore := e.stats().Completed // (a mover may move the fenced jobs: before reading them)
	before := map[string]jobstore.Job{recovered: e.get(recovered), failed: e.get(failed)}

	forged := held[2].Lease
	forged.Token = "forged-token"
	cs := []jobstore.Completion{
		{Lease: held[1].Lease, Result: []byte("r1")},
		{Lease: expiring.Lease, Result: []byte("stale")},
		{Lease: forged, Result: []byte("forged")},
		{Lease: held[0].Lease, Result: []byte("stale")},
		{Lease: held[2].Lease, Result: []byte("r2")},
		{Lease: held[1].Lease, Result: []byte("again")},
		{Lease: jobstore.Lease{JobID: ok1}, Result: nil},
	}
	want := []error{nil, jobstore.ErrLeaseLost, jobstore.ErrLeaseLost, jobstore.ErrLeaseLost, nil,
		jobstore.ErrLeaseLost, jobstore.ErrInvalid}
	errs, err := jobstore.CompleteAll(e.ctx, e.s, cs)
	if err != nil {
		e.t.Fatalf("CompleteAll: %v", err)
	}
	if len(errs) != len(cs) {
		e.t.Fatalf("CompleteAll returned %d errors for %d completions", len(errs), len(cs))
	}
	for i, w := range want {
		if (w == nil) != (errs[i] == nil) || (w != nil && !errors.Is(errs[i], w)) {
			e.t.Errorf("completion %d (job %s): err %v, want %v", i, cs[i].Lease.JobID, errs[i], w)
		}
	}
	for id, result := range map[string]string{ok1: "r1", ok2: "r2"} {
		if j := e.wantStatus(id, jobstore.StatusCompleted); string(j.Result) != result {
			e.t.Errorf("job %s: Result %q, want %q", id, j.Result, result)
		}
	}
	for id, b := range before {
		if d := diffJob(b, e.get(id)); len(d) > 0 {
			e.t.Errorf("fenced job %s changed: %v", id, d)
		}
	}
	if n := e.stats().Completed - completedBefore; n != 2 {
		e.t.Errorf("Stats.Completed grew by %d, want 2", n)
	}
	// The fenced jobs still run to completion under new leases.
	e.clk.Advance(backoffMax)
	again := e.claim(2, holdLease)
	if !sameSet(ids(again), []string{recovered, failed}) {
		e.t.Fatalf("Claim after the batch returned %v, want %s and %s", ids(again), recovered, failed)
	}
	for _, c := range again {
		if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
			e.t.Errorf("Complete(%s) under its new lease: %v", c.Job.ID, err)
		}
	}
}

// inOrder returns cl in the order of ids when it holds exactly those jobs,
// for a store without jobstore.CapQueueOrder (its Claim takes shard by
// shard); cl itself otherwise.
func inOrder(cl []jobstore.Claimed, ids ...string) []jobstore.Claimed {
	if len(cl) != len(ids) {
		return cl
	}
	out := make([]jobstore.Claimed, 0, len(ids))
	for _, id := range ids {
		for _, c := range cl {
			if c.Job.ID == id {
				out = append(out, c)
			}
		}
	}
	if len(out) != len(ids) {
		return cl
	}
	return out
}
