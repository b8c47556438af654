package engine

import (
	"context"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
)

// TestJobMixAndStorm runs a mix of two kinds over noisy tenants with a
// failure window, and checks each mechanism by what it must leave in the
// ledger's split: a fatal kind's failures dead-letter with no retry, the
// window's failures retry only the jobs intended in it, and the noisy
// tenant gets its share.
func TestJobMixAndStorm(t *testing.T) {
	src := `
duration: 1.5s
warmup: 200ms
drain: 10s
calibration: off
backends: [null]
store: {backoff_base: 10ms, backoff_max: 40ms, poll_interval: 20ms}
producers: {rate: 800, max_retries: 4}
workers: {count: 2, concurrency: 8, claim_batch: 4, recovery_interval: 100ms}
jobs:
  - {name: ok, share: 0.7, handler: 200us, tenants: "noisy(10, 0.5)"}
  - {name: doomed, share: 0.3, handler: 200us, fail: 1, fail_class: fatal, tenants: "noisy(10, 0.5)"}
failure_windows:
  - {from: 500ms, for: 500ms, share: 0.5}
`
	s, err := scenario.ParseScenario("mix.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec := s.Runs()[0]
	res := Run(context.Background(), spec, newNull(t, spec.Config), Hooks{Label: "null"})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	m := spec.Config.MixLayout()
	if len(res.Mix) != m.N() {
		t.Fatalf("split has %d groups, want %d", len(res.Mix), m.N())
	}
	ok, doomed := res.Mix[0], res.Mix[1]
	if got := ok.Planned + doomed.Planned; got != res.Ledger.Attempted {
		t.Errorf("kinds plan %d jobs, the ledger %d", got, res.Ledger.Attempted)
	}
	if share := float64(doomed.Planned) / float64(ok.Planned+doomed.Planned); share < 0.25 || share > 0.35 {
		t.Errorf("doomed kind got %.2f of the jobs, want 0.3", share)
	}
	if doomed.Retries != 0 || doomed.DeadLettered != doomed.Acknowledged || doomed.Completed != 0 {
		t.Errorf("fatal kind: %d retries, %d dead of %d acknowledged, %d completed; want every job dead-lettered at once",
			doomed.Retries, doomed.DeadLettered, doomed.Acknowledged, doomed.Completed)
	}
	before, during, after := res.Mix[m.StormGroup(0)], res.Mix[m.StormGroup(1)], res.Mix[m.StormGroup(2)]
	if before.Retries != 0 || after.Retries != 0 {
		t.Errorf("retries outside the window: before %d, after %d; want 0", before.Retries, after.Retries)
	}
	if during.Retries == 0 {
		t.Error("no retry of the jobs intended in the failure window")
	}
	noisy, quiet := res.Mix[m.TenantGroup(0)], res.Mix[m.QuietGroup()]
	if share := float64(noisy.Planned) / float64(noisy.Planned+quiet.Planned); share < 0.45 || share > 0.55 {
		t.Errorf("noisy tenant got %.2f of the jobs, want 0.5", share)
	}
	if l := res.Ledger; l.Lost != 0 || l.DuplicateCompletions != 0 {
		t.Errorf("ledger: %d lost, %d duplicate completions", l.Lost, l.DuplicateCompletions)
	}
}
