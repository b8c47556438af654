package conformance

import (
	"context"
	"fmt"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// caseRedisOutOfMemory: the store on a Redis at maxmemory under
// noeviction, which refuses every write that could grow memory with its
// OOM reply. Each call is either refused whole or done whole: Redis
// checks memory before a script's first write and never stops one in the
// middle, so a script whose first write frees memory (an LREM before an
// HSET) runs to its end, and that is a correct answer too. A refused
// Enqueue stores nothing; a refused Complete leaves the job leased and the
// same Complete succeeds once memory frees; a refused Recover takes
// nothing back and the retried one takes the jobs back. Every refusal must
// carry Redis's reply (rclient.IsOOM), so the harness counts it as
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
	enqueued := e.refusedOrDone("Enqueue", e.s.Enqueue(e.ctx, jobstore.NewJob{ID: refused}))
	completed := e.refusedOrDone("Complete", e.s.Complete(e.ctx, held.Lease, []byte("r")))
	var early jobstore.RecoverResult
	recovered := false
	if lapsed.Job.ID != "" {
		e.expire(e.lease)
		var err error
		early, err = e.s.Recover(e.ctx, 10)
		recovered = e.refusedOrDone("Recover", err)
	}
	restore()

	if enqueued {
		e.wantStatus(refused, jobstore.StatusQueued)
	} else {
		e.wantMissing(refused, "an Enqueue refused at maxmemory")
	}
	e.afterOOMComplete(held, completed, lapsed.Job.ID != "")
	if lapsed.Job.ID == "" {
		return
	}
	back := []string{lapsed.Job.ID}
	if !completed {
		back = append(back, held.Job.ID)
	}
	r := early
	if !recovered {
		r = e.recover(10)
	}
	if r.Len() != len(back) {
		e.t.Errorf("Recover took back %d jobs (%+v), want %d (%v)", r.Len(), r, len(back), back)
	}
	if enqueued {
		back = append(back, refused)
	}
	got := e.claimAll(10, e.lease)
	for _, id := range back {
		if !got[id] {
			e.t.Errorf("after memory freed, Claim did not return %s (got %v)", id, got)
		}
	}
	if len(got) != len(back) {
		e.t.Errorf("after memory freed, Claim returned %v, want exactly %v", got, back)
	}
}

// afterOOMComplete checks the held job after memory freed: a Complete done
// whole at maxmemory left it completed; a refused one left it leased, and
// (when its lease did not lapse) the same Complete now succeeds.
func (e *env) afterOOMComplete(held jobstore.Claimed, completed, lapsed bool) {
	e.t.Helper()
	switch {
	case completed:
		e.wantStatus(held.Job.ID, jobstore.StatusCompleted)
	case !lapsed:
		e.wantStatus(held.Job.ID, jobstore.StatusInProgress)
		if err := e.s.Complete(e.ctx, held.Lease, []byte("r")); err != nil {
			e.t.Errorf("Complete retried after memory freed: %v", err)
		}
		e.wantStatus(held.Job.ID, jobstore.StatusCompleted)
	}
}

// refusedOrDone checks a call made at maxmemory: done (true) or refused
// with Redis's OOM reply (false). Any other error fails the case.
func (e *env) refusedOrDone(what string, err error) bool {
	e.t.Helper()
	if err != nil && !rclient.IsOOM(err) {
		e.t.Errorf("%s at maxmemory under noeviction: %v, want success or an error carrying Redis's OOM reply (rclient.IsOOM)", what, err)
	}
	return err == nil
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
