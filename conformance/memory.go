package conformance

import (
	"context"
	"fmt"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// caseRedisOutOfMemory: the store on a Redis at maxmemory under
// noeviction, which refuses every write with its OOM reply. A refused
// Enqueue stores nothing; a refused Complete leaves the job leased, and
// the same Complete succeeds once memory frees; a refused Recover takes
// nothing back, and takes the job back once memory frees. Every refusal
// must carry Redis's reply (rclient.IsOOM), so the harness counts it as
// refused, not as a network failure of unknown outcome.
func caseRedisOutOfMemory(e *env) {
	if e.target.Redis != nil && e.target.Redis.Cluster {
		e.t.Skip("maxmemory is set per node; the suite sets it on a standalone target only")
	}
	held := e.enqueueClaim(jobstore.NewJob{ID: e.id("held"), MaxRetries: 3}, e.lease)
	var lapsed jobstore.Claimed
	if e.has(jobstore.CapLeaseRecovery) {
		lapsed = e.enqueueClaim(jobstore.NewJob{ID: e.id("lapsed"), MaxRetries: 3}, e.lease)
	}
	restore := e.fillMemory()
	defer restore()

	refused := e.id("refused")
	e.wantOOM("Enqueue", e.s.Enqueue(e.ctx, jobstore.NewJob{ID: refused}))
	e.wantOOM("Complete", e.s.Complete(e.ctx, held.Lease, []byte("r")))
	if lapsed.Job.ID != "" {
		e.expire(e.lease)
		_, err := e.s.Recover(e.ctx, 10)
		e.wantOOM("Recover", err)
	}
	restore()

	e.wantMissing(refused, "an Enqueue refused at maxmemory")
	if lapsed.Job.ID == "" {
		e.wantStatus(held.Job.ID, jobstore.StatusInProgress)
		if err := e.s.Complete(e.ctx, held.Lease, []byte("r")); err != nil {
			e.t.Errorf("Complete retried after memory freed: %v", err)
		}
		e.wantStatus(held.Job.ID, jobstore.StatusCompleted)
		return
	}
	// Both leases lapsed: the retried Recover takes both back.
	r := e.recover(10)
	if r.Len() != 2 {
		e.t.Errorf("Recover after memory freed took back %d jobs (%+v), want 2: the refused Recover must leave them to it", r.Len(), r)
	}
	for _, id := range []string{held.Job.ID, lapsed.Job.ID} {
		e.claimOne(id, e.lease)
	}
}

// wantOOM checks a call Redis must have refused at maxmemory.
func (e *env) wantOOM(what string, err error) {
	e.t.Helper()
	switch {
	case err == nil:
		e.t.Errorf("%s at maxmemory under noeviction: no error, want Redis's OOM reply", what)
	case !rclient.IsOOM(err):
		e.t.Errorf("%s at maxmemory under noeviction: %v, want an error carrying Redis's OOM reply (rclient.IsOOM)", what, err)
	}
}

// fillMemory puts the target at maxmemory under noeviction: a maxmemory
// of one byte is below any used memory, so every write is refused and no
// ballast is needed. The returned restore (idempotent) sets both back.
func (e *env) fillMemory() (restore func()) {
	e.t.Helper()
	get := func(name string) string {
		v, err := e.client.Do(e.ctx, rclient.Command{Head: []string{"CONFIG", "GET", name}})
		if arr, ok := v.([]any); err == nil && ok && len(arr) == 2 {
			return fmt.Sprint(arr[1])
		}
		if m, ok := v.(map[string]any); err == nil && ok {
			return fmt.Sprint(m[name])
		}
		e.t.Fatalf("CONFIG GET %s: %v (reply %v)", name, err, v)
		return ""
	}
	set := func(ctx context.Context, name, val string) error {
		_, err := e.client.Do(ctx, rclient.Command{Head: []string{"CONFIG", "SET", name, val}})
		return err
	}
	maxmem, policy := get("maxmemory"), get("maxmemory-policy")
	if err := set(e.ctx, "maxmemory-policy", "noeviction"); err != nil {
		e.t.Skipf("the target refuses CONFIG SET (%v): the suite cannot put it at maxmemory", err)
	}
	done := false
	restore = func() {
		if done {
			return
		}
		done = true
		ctx := context.WithoutCancel(e.ctx)
		for _, kv := range [][2]string{{"maxmemory", maxmem}, {"maxmemory-policy", policy}} {
			if err := set(ctx, kv[0], kv[1]); err != nil {
				e.t.Errorf("restore %s %s: %v", kv[0], kv[1], err)
			}
		}
	}
	if err := set(e.ctx, "maxmemory", "1"); err != nil {
		restore()
		e.t.Fatalf("CONFIG SET maxmemory 1: %v", err)
	}
	return restore
}
