package runner

import (
	"context"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestHandoffKills runs scenarios/handoff-kills.yaml, shortened to 4s, on
// every store that hands off and the polling zset and bucket: mostly idle
// worker processes SIGKILLed every 400ms, max_retries 0. Each dead letter must be a job in flight at a
// kill (the claimer that held it died), as with polling; a job handed to a
// killed process's registration comes back without an attempt instead of
// being dead-lettered unrun, which failed this run before issue 42's fix.
func TestHandoffKills(t *testing.T) {
	if testing.Short() {
		t.Skip("six runs of about 7s")
	}
	s, err := scenario.LoadScenario("../../scenarios/handoff-kills.yaml", scenario.Override{Path: "duration", Value: "4s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SelectBackends([]string{"zset", "bucket", "stream", "dual"}); err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Summary.Runs {
		l, rv := r.Ledger, r.Recovery
		if r.Status != summary.StatusOK || rv == nil {
			t.Errorf("%s: status %s: %v", r.Label, r.Status, r.Problems)
			continue
		}
		if rv.Landed < 5 {
			t.Errorf("%s: %d kills landed, want about 8", r.Label, rv.Landed)
		}
		if l.DeadLettered != int64(rv.Affected) || l.DeadUnstarted != l.DeadUnstartedExplained || l.Lost != 0 {
			t.Errorf("%s: %d dead-lettered (%d with no start, %d of them caught by a kill), %d in flight at the kills, %d lost; want dead = in flight, none unexplained",
				r.Label, l.DeadLettered, l.DeadUnstarted, l.DeadUnstartedExplained, rv.Affected, l.Lost)
		}
		t.Logf("%s: %d kills, %d in flight (%d never started), %d dead-lettered, %d hand-offs returned without an attempt",
			r.Label, rv.Landed, rv.Affected, rv.NeverStarted, l.DeadLettered, l.ReturnedUnstarted)
	}
}
