package ledger

import (
	"slices"
	"testing"

	"github.com/aebench/aebench/faults"
)

// claimHeld charges a never-started lost job to a fault that may have
// held it unreported: at or after its due time and enqueue, within the
// fault's budget, and within fetchHold for a job queued due at once.
func TestClaimHeld(t *testing.T) {
	kill := ms(10_000)
	cases := []struct {
		name   string
		job    LostJob
		budget int
		want   bool
	}{
		{"due just before the kill", LostJob{Due: ms(9_800), Enq: ms(9_800)}, 1, true},
		{"no budget left", LostJob{Due: ms(9_800), Enq: ms(9_800)}, 0, false},
		{"enqueued after the kill", LostJob{Due: ms(10_200), Enq: ms(10_200)}, 1, false},
		{"queued due at once, seconds before the kill", LostJob{Due: ms(7_000), Enq: ms(7_000)}, 1, false},
		{"delayed, due seconds before the kill", LostJob{Due: ms(7_000), Enq: ms(1_000), Scheduled: true}, 1, true},
		{"delayed, due after the kill", LostJob{Due: ms(10_500), Enq: ms(1_000), Scheduled: true}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &declaredHit{at: kill, budget: tc.budget}
			if got := claimHeld([]*declaredHit{h}, tc.job); got != tc.want {
				t.Errorf("claimHeld = %v, want %v", got, tc.want)
			}
			if tc.want && h.budget != tc.budget-1 {
				t.Errorf("budget %d after a charge, want %d", h.budget, tc.budget-1)
			}
		})
	}
	// Two jobs, two kills with one each: each takes the first with room.
	a, b := &declaredHit{at: ms(3_000), budget: 1}, &declaredHit{at: ms(6_000), budget: 1}
	hits := []*declaredHit{a, b}
	for _, j := range []LostJob{{Due: ms(2_900), Enq: ms(2_900), Scheduled: true}, {Due: ms(2_950), Enq: ms(2_950), Scheduled: true}} {
		if !claimHeld(hits, j) {
			t.Fatalf("job due %v not charged", j.Due)
		}
	}
	if a.budget != 0 || b.budget != 0 {
		t.Errorf("budgets %d and %d, want both spent", a.budget, b.budget)
	}
}

// JudgeDeclaredLoss covers the kill's in-flight job and, within the
// declared holds, never-started jobs the killed process held, counting
// those apart (lost_held_jobs against lost_held_allowed) so a count check
// can tell them from the in-flight ones; a held job beyond the budget is
// named and fails the run.
func TestJudgeDeclaredLoss(t *testing.T) {
	cases := []struct {
		name           string
		holds          int
		declared, held int64
		beyond         []string
		ok             bool
	}{
		{"two held, two allowed", 2, 3, 2, nil, true},
		{"two held, one allowed: the latest due is held", 1, 2, 1, []string{"b"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			play(l, steps(enqueued("a", 9_700), enqueued("b", 9_800), enqueued("c", 9_900),
				[]ledgerStep{{op: "start", id: "a", at: 9_750}}))
			tr := faults.NewTracker(origin)
			ev := faults.Event{Index: 1, Fault: faults.Fault{Kind: faults.WorkerKill}}
			tr.Fault(ev, "w0", ms(10_000), []faults.Affected{{ID: "a", Started: true}})
			sum, _ := tr.Finish(func(string) faults.Outcome { return faults.Outcome{Lost: true} })
			r := l.CheckWith(true)
			l.JudgeDeclaredLoss(&r, Declared{Why: "acks early", Kinds: []string{string(faults.WorkerKill)},
				Holds: func(faults.Kind) int { return tc.holds }}, sum)
			if r.Lost != 3 || r.LostDeclaredJobs != tc.declared || r.LostHeldJobs != tc.held ||
				r.LostHeldAllowed != int64(tc.holds) || !slices.Equal(r.LostBeyondIDs, tc.beyond) || r.OK != tc.ok {
				t.Errorf("lost %d, declared %d, held %d of %d allowed, beyond %v, ok %v; want 3, %d, %d of %d, %v, %v",
					r.Lost, r.LostDeclaredJobs, r.LostHeldJobs, r.LostHeldAllowed, r.LostBeyondIDs, r.OK,
					tc.declared, tc.held, tc.holds, tc.beyond, tc.ok)
			}
		})
	}
}
