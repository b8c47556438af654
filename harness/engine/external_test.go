package engine

import "testing"

// claimHeld charges a never-started lost job to a fault that may have
// held it unreported: at or after its due time and enqueue, within the
// fault's budget, and within fetchHold for a job queued due at once.
func TestClaimHeld(t *testing.T) {
	kill := ms(10_000)
	cases := []struct {
		name   string
		job    lostJob
		budget int
		want   bool
	}{
		{"due just before the kill", lostJob{due: ms(9_800), enq: ms(9_800)}, 1, true},
		{"no budget left", lostJob{due: ms(9_800), enq: ms(9_800)}, 0, false},
		{"enqueued after the kill", lostJob{due: ms(10_200), enq: ms(10_200)}, 1, false},
		{"queued due at once, seconds before the kill", lostJob{due: ms(7_000), enq: ms(7_000)}, 1, false},
		{"delayed, due seconds before the kill", lostJob{due: ms(7_000), enq: ms(1_000), scheduled: true}, 1, true},
		{"delayed, due after the kill", lostJob{due: ms(10_500), enq: ms(1_000), scheduled: true}, 1, false},
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
	for _, j := range []lostJob{{due: ms(2_900), enq: ms(2_900), scheduled: true}, {due: ms(2_950), enq: ms(2_950), scheduled: true}} {
		if !claimHeld(hits, j) {
			t.Fatalf("job due %v not charged", j.due)
		}
	}
	if a.budget != 0 || b.budget != 0 {
		t.Errorf("budgets %d and %d, want both spent", a.budget, b.budget)
	}
}
