package stream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func newStore(t *testing.T) (*Store, *clock.Manual, rclient.Client) {
	t.Helper()
	c := basetest.Client(t)
	clk := clock.NewManual(time.Now())
	s, err := New(context.Background(), c, jobstore.Options{Queue: "t", Clock: clk, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s, clk, c
}

func claim(t *testing.T, s *Store, max int, wait time.Duration) []jobstore.Claimed {
	t.Helper()
	cl, err := s.Claim(context.Background(), jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: time.Minute, Wait: wait})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return cl
}

func do(t *testing.T, c rclient.Client, cmd rclient.Command) any {
	t.Helper()
	v, err := c.Do(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%v: %v", cmd.Head, err)
	}
	return v
}

// entriesAdded is how many entries the stream has ever had appended.
func entriesAdded(t *testing.T, s *Store, c rclient.Client) int64 {
	t.Helper()
	m, _ := do(t, c, rclient.Command{Head: []string{"XINFO", "STREAM"}, Keys: []string{s.Ready}}).(map[string]any)
	return base.Int(m["entries-added"])
}

// A job read before its RunAt goes back into the stream and is never
// started early; a waiting claim pauses between passes instead of spinning.
func TestNotDueCycledNeverEarly(t *testing.T) {
	s, clk, c := newStore(t)
	ctx := context.Background()
	runAt := clk.Now().Add(5 * time.Second)
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "late", RunAt: runAt}); err != nil {
		t.Fatal(err)
	}
	ref0 := mustGet(t, s, "late").Ref
	if cl := claim(t, s, 1, 0); len(cl) != 0 {
		t.Fatalf("claimed %v before its RunAt", cl[0].Job.ID)
	}
	j := mustGet(t, s, "late")
	if j.Ref == ref0 || j.Status != jobstore.StatusQueued {
		t.Errorf("after an early read: Ref %q (was %q) Status %v, want a new entry, Queued", j.Ref, ref0, j.Status)
	}
	if st, _ := s.Stats(ctx); st.Due != 1 || st.InProgress != 0 {
		t.Errorf("Stats %+v, want the job waiting (Due 1) and none in progress", st)
	}

	before := entriesAdded(t, s, c)
	start := time.Now()
	if cl := claim(t, s, 1, 300*time.Millisecond); len(cl) != 0 {
		t.Fatal("claimed a job before its RunAt while waiting")
	}
	cycles := entriesAdded(t, s, c) - before
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Errorf("Claim(Wait 300ms) returned after %v", el)
	}
	if cycles < 2 || cycles > 10 {
		t.Errorf("a 300ms wait with PollInterval 50ms re-appended the job %d times, want a pass per poll (about 6)", cycles)
	}
	t.Logf("a 300ms wait re-appended the not-due job %d times", cycles)

	clk.Advance(4999 * time.Millisecond)
	if cl := claim(t, s, 1, 0); len(cl) != 0 {
		t.Fatal("claimed 1ms before RunAt")
	}
	clk.Advance(time.Millisecond)
	cl := claim(t, s, 1, 0)
	if len(cl) != 1 || cl[0].Job.ID != "late" || !mustGet(t, s, "late").RunAt.Equal(runAt) {
		t.Fatalf("at RunAt: claimed %v, want the job", cl)
	}
}

// A claim for one job finds a due job behind many delayed ones in one call,
// and leaves the delayed ones waiting.
func TestClaimScansPastDelayed(t *testing.T) {
	s, clk, _ := newStore(t)
	ctx := context.Background()
	var jobs []jobstore.NewJob
	for i := range 250 {
		jobs = append(jobs, jobstore.NewJob{ID: fmt.Sprintf("d%03d", i), RunAt: clk.Now().Add(time.Hour)})
	}
	jobs = append(jobs, jobstore.NewJob{ID: "due"})
	if err := s.Enqueue(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	cl := claim(t, s, 1, 0)
	if len(cl) != 1 || cl[0].Job.ID != "due" {
		t.Fatalf("claimed %v, want [due]", cl)
	}
	if st, _ := s.Stats(ctx); st.Due != 250 || st.InProgress != 1 {
		t.Errorf("Stats %+v, want 250 waiting and 1 in progress", st)
	}
}

func mustGet(t *testing.T, s *Store, id string) jobstore.Job {
	t.Helper()
	j, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// readAsCrashed reads one new entry as a consumer that will never activate
// it (a claimer that died after XREADGROUP) and returns the entry id.
func readAsCrashed(t *testing.T, s *Store, c rclient.Client) string {
	t.Helper()
	v := do(t, c, rclient.Command{Head: []string{"XREADGROUP", "GROUP", base.StreamGroup, "crashed", "COUNT", "1", "STREAMS"},
		Keys: []string{s.Ready}, Args: []string{">"}})
	m, _ := v.(map[string]any)
	es, _ := m[s.Ready].([]any)
	if len(es) != 1 {
		t.Fatalf("XREADGROUP: %v", v)
	}
	id, _ := es[0].([]any)[0].(string)
	return id
}

// activateLate runs the activating script for entry as the crashed claimer
// would have, and returns how many jobs it activated.
func activateLate(t *testing.T, s *Store, c rclient.Client, entry, id string) int {
	t.Helper()
	now := s.Now()
	v, err := s.Run(context.Background(), base.ScriptStreamActivate, []string{s.Keys.Active(), s.Ready},
		[]string{base.Ms(now), base.Ms(now.Add(time.Minute)), "late", "tok", "1", entry, id})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := v.([]any)[0].([]any) // id, token, payload, retries|name per activated job
	return len(jobs) / 4
}

// An entry read by a claimer that never activated it is brought back by
// Recover once two sweeps a grace period apart saw it unleased; a slow
// claimer's activation after that is refused; an entry merely between read
// and activation is left alone.
func TestOrphanSweep(t *testing.T) {
	s, clk, c := newStore(t)
	ctx := context.Background()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "orphan", MaxRetries: 1}, jobstore.NewJob{ID: "slow"}); err != nil {
		t.Fatal(err)
	}
	lost := readAsCrashed(t, s, c)
	slow := readAsCrashed(t, s, c)
	if cl := claim(t, s, 5, 0); len(cl) != 0 {
		t.Fatalf("claimed %v: both entries are pending", cl[0].Job.ID)
	}
	if st, _ := s.Stats(ctx); st.InProgress != 2 || st.Due != 0 {
		t.Errorf("Stats %+v, want both read entries counted in progress", st)
	}
	if r, err := s.Recover(ctx, 10); err != nil || len(r.Requeued)+len(r.DeadLettered) != 0 {
		t.Fatalf("first Recover = %+v, %v", r, err)
	}
	// The slow claimer activates now, after one sweep: it keeps its job.
	if n := activateLate(t, s, c, slow, "slow"); n != 1 {
		t.Fatalf("activation after one sweep activated %d jobs, want 1", n)
	}
	clk.Advance(base.OrphanGrace)
	if _, err := s.Recover(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if j := mustGet(t, s, "slow"); j.Status != jobstore.StatusInProgress || j.Ref != slow {
		t.Errorf("leased job after the second sweep: Status %v Ref %q, want InProgress %q", j.Status, j.Ref, slow)
	}
	j := mustGet(t, s, "orphan")
	if j.Ref == lost || j.Status != jobstore.StatusQueued || j.RetryCount != 0 {
		t.Errorf("orphan after the second sweep: Ref %q (was %q) Status %v RetryCount %d, want a new entry, Queued, 0",
			j.Ref, lost, j.Status, j.RetryCount)
	}
	if n := activateLate(t, s, c, lost, "orphan"); n != 0 {
		t.Errorf("the crashed claimer's late activation took the job")
	}
	cl := claim(t, s, 5, 0)
	if len(cl) != 1 || cl[0].Job.ID != "orphan" || cl[0].Job.RetryCount != 0 {
		t.Fatalf("claimed %v, want the orphan once with RetryCount 0", cl)
	}
	if st, _ := s.Stats(ctx); st.InProgress != 2 || st.Due != 0 {
		t.Errorf("Stats %+v, want 2 in progress (the old entry gone)", st)
	}
	if err := s.Complete(ctx, cl[0].Lease, nil); err != nil {
		t.Fatal(err)
	}
}

// xlen is the stream's length.
func xlen(t *testing.T, s *Store, c rclient.Client) int64 {
	t.Helper()
	return base.Int(do(t, c, rclient.Cmd("XLEN", s.Ready)))
}

// Entries are never deleted one by one: a claim trims the whole nodes of
// entries read and done with, so the stream holds about a node of them
// after a thousand jobs ran, and Stats still counts only what waits. An
// entry pending for a claimer that has not leased it keeps its node and
// every later one.
func TestReadEntriesTrimmed(t *testing.T) {
	s, _, c := newStore(t)
	ctx := context.Background()
	const n, node = 1000, 100 // redis.conf's stream-node-max-entries
	jobs := make([]jobstore.NewJob, n)
	for i := range jobs {
		jobs[i] = jobstore.NewJob{ID: fmt.Sprintf("j%d", i)}
	}
	if err := s.Enqueue(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	for done := 0; done < n-1; {
		cl := claim(t, s, 50, 0)
		if len(cl) == 0 {
			t.Fatalf("claim found nothing after %d of %d", done, n)
		}
		for _, x := range cl {
			if err := s.Complete(ctx, x.Lease, nil); err != nil {
				t.Fatal(err)
			}
		}
		done += len(cl)
		if done == n/2 {
			readAsCrashed(t, s, c) // pending from here on
		}
	}
	if l := xlen(t, s, c); l < n/2-node || l > n/2+2*node {
		t.Errorf("XLEN %d with an entry pending from job %d on, want about %d", l, n/2, n/2)
	}
	if st, _ := s.Stats(ctx); st.Due != 0 || st.InProgress != 1 || st.Completed != n-1 {
		t.Errorf("Stats %+v, want nothing due, the pending entry in progress, %d completed", st, n-1)
	}
	if _, err := s.Recover(ctx, 10); err != nil { // sees the orphan once; it stays pending for now
		t.Fatal(err)
	}
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "last"}); err != nil {
		t.Fatal(err)
	}
	if cl := claim(t, s, 1, 0); len(cl) != 1 || cl[0].Job.ID != "last" {
		t.Fatalf("claimed %v, want the last job", cl)
	}
	if l := xlen(t, s, c); l > n/2+2*node {
		t.Errorf("XLEN %d, want at most about %d", l, n/2+node)
	}
}

// A job canceled while its entry is unread is skipped by the claim that
// reads the entry, which leaves no trace of it; Stats never counts it.
func TestCancelUnreadVoids(t *testing.T) {
	s, _, c := newStore(t)
	ctx := context.Background()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "a"}, jobstore.NewJob{ID: "b"}, jobstore.NewJob{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stats(ctx); st.Due != 2 {
		t.Errorf("Stats %+v after a cancel, want Due 2", st)
	}
	if cl := claim(t, s, 1, 0); len(cl) != 1 || cl[0].Job.ID != "b" {
		t.Fatalf("claimed %v, want b", cl)
	}
	if n := base.Int(do(t, c, rclient.Cmd("SCARD", s.Keys.Voided()))); n != 0 {
		t.Errorf("%d voided entries left after the claim passed them", n)
	}
	if st, _ := s.Stats(ctx); st.Due != 1 || st.InProgress != 1 {
		t.Errorf("Stats %+v, want Due 1, InProgress 1", st)
	}
}
