package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestHandoffKills runs scenarios/handoff-kills.yaml, shortened to 4s, on
// every store that hands off and the polling zset and bucket: mostly idle
// worker processes SIGKILLed every 400ms, max_retries 0. Each job in
// flight at a kill is dead-lettered, as with polling, and no dead letter is
// a job leased and never run that no kill explains: a job handed to a
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
			t.Errorf("%s: status %s: %v; last leases %v; kills %s", r.Label, r.Status, r.Problems, l.DeadUnstartedLeases, kills(rv))
			continue
		}
		if rv.Landed < 5 {
			t.Errorf("%s: %d kills landed, want about 8", r.Label, rv.Landed)
		}
		// Every job in flight at a kill dies with its only attempt; a dead
		// letter beyond them may only be a job whose live worker stalled
		// past its lease (a loaded machine), which started it: none may be
		// a job leased and never run that no kill explains. On a quiet
		// machine dead equals in flight (docs/results.md).
		if l.DeadLettered < int64(rv.Affected) || l.DeadUnstarted != l.DeadUnstartedExplained || l.Lost != 0 {
			t.Errorf("%s: %d dead-lettered (%d with no start, %d of them caught by a kill), %d in flight at the kills, %d lost; want every job in flight dead, no unexplained dead letter with no start",
				r.Label, l.DeadLettered, l.DeadUnstarted, l.DeadUnstartedExplained, rv.Affected, l.Lost)
		}
		t.Logf("%s: %d kills, %d in flight (%d never started), %d dead-lettered, %d hand-offs returned without an attempt",
			r.Label, rv.Landed, rv.Affected, rv.NeverStarted, l.DeadLettered, l.ReturnedUnstarted)
	}
}

// TestHandoffFirstTouch: a job handed to a waiting claimer comes under a
// provisional lease (2s) shorter than the 30s the workers ask for; with no
// heartbeat (recovery_mode seed), the worker's first Extend, halfway
// through it, is what keeps a 2.5s handler's job from being taken back
// and run twice. Without that touch every job here would run twice.
func TestHandoffFirstTouch(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of about 8s")
	}
	out, _ := runScenarioText(t, "first-touch.yaml", `
name: first-touch
duration: 3s
warmup: 500ms
drain: 10s
calibration: off
backends: [zset, stream]
producers: {rate: 4, arrivals: constant}
workers: {count: 2, concurrency: 4, handler: constant(2500ms), lease: 30s, recovery_mode: seed, recovery_interval: 100ms}
`)
	for _, r := range out.Summary.Runs {
		l := r.Ledger
		if r.Status != summary.StatusOK || l.DuplicatedExecutions != 0 || l.Completed == 0 {
			t.Errorf("%s: status %s, %d completed, %d duplicated (problems %v); want every job run once", r.Label, r.Status, l.Completed, l.DuplicatedExecutions, r.Problems)
		}
		if r.Counters.Extends == 0 {
			t.Errorf("%s: no Extend: the handed jobs' provisional leases were not renewed", r.Label)
		}
	}
}

// kills lists a run's faults as target@seconds into the run, for a
// failure's message.
func kills(rv *faults.Summary) string {
	if rv == nil {
		return "none"
	}
	var out []string
	for _, rec := range rv.Records {
		out = append(out, fmt.Sprintf("%s@%.3fs", rec.Target, rec.RunAtS))
	}
	return strings.Join(out, " ")
}
