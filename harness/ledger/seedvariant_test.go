package ledger

import (
	"strings"
	"testing"
)

// TestLedgerSeedVariant: a seed variant's lost and early jobs are reported
// as expected for it, with their counts, and do not fail the run; the same
// events fail a corrected store's run; an unexpected job fails both.
func TestLedgerSeedVariant(t *testing.T) {
	lost := []ledgerStep{{op: "plan", id: "a"}, {op: "ack", id: "a"}, {op: "start", id: "a", at: 5}}
	early := []ledgerStep{{op: "plan-delayed", id: "b", runAt: 100}, {op: "ack", id: "b"},
		{op: "start", id: "b", at: 50}, {op: "complete", id: "b", at: 60}}
	stray := []ledgerStep{{op: "start", id: "never-planned", at: 5}}
	for _, tc := range []struct {
		name         string
		steps        []ledgerStep
		okVariant    bool
		okCorrected  bool
		wantExpected string
	}{
		{"lost", lost, true, false, "1 lost"},
		{"early", early, true, false, "1 started early"},
		{"unexpected", stray, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv, lc := New(), New()
			play(lv, tc.steps)
			play(lc, tc.steps)
			v, c := lv.CheckSeedVariant(), lc.CheckWith(false)
			if v.OK != tc.okVariant || c.OK != tc.okCorrected || !v.SeedVariant || c.SeedVariant {
				t.Fatalf("variant ok %v (problems %v), corrected ok %v (problems %v): want %v, %v", v.OK, v.Problems, c.OK, c.Problems, tc.okVariant, tc.okCorrected)
			}
			if tc.wantExpected != "" && (len(v.Expected) != 1 || !strings.Contains(v.Expected[0], tc.wantExpected) ||
				!strings.Contains(v.Expected[0], "expected for this seed variant")) {
				t.Errorf("expected %q, want it to name %q", v.Expected, tc.wantExpected)
			}
			if len(c.Expected) != 0 {
				t.Errorf("corrected store's report lists expected %q", c.Expected)
			}
		})
	}
}
