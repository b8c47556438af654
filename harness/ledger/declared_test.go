package ledger

import (
	"testing"
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
