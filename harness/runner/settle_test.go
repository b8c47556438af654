package runner

import (
	"context"
	"testing"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestKillAfterComplete kills worker processes right after a successful
// Complete, before its event reaches the coordinator, on every backend:
// the read-back must settle those jobs as completed, never lost.
func TestKillAfterComplete(t *testing.T) {
	const src = `
duration: 1200ms
warmup: 100ms
drain: 10s
calibration: off
redis: {mode: embedded}
store: {poll_interval: 20ms}
producers: {rate: 200}
workers: {count: 2, processes: 2, concurrency: 2, claim_wait: 100ms, handler: "uniform(5ms, 15ms)", lease: 500ms, recovery_mode: lease, recovery_interval: 100ms}
faults:
  - {kind: worker_kill, point: after_complete, at: 300ms, worker: 0, replace_after: 100ms}
  - {kind: worker_kill, point: after_complete, at: 700ms, worker: 1, replace_after: 100ms}
backends: [zset, stream, bucket, dual]
`
	s, err := scenario.ParseScenario("kill-after-complete.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Summary.Runs) != 4 {
		t.Fatalf("%d runs, want 4", len(out.Summary.Runs))
	}
	for _, r := range out.Summary.Runs {
		t.Run(r.Label, func(t *testing.T) {
			l, rv := r.Ledger, r.Recovery
			if r.Status != summary.StatusOK {
				t.Errorf("status %s: %v", r.Status, r.Problems)
			}
			if rv == nil {
				t.Fatal("no recovery report")
			}
			landed := 0
			for _, rec := range rv.Records {
				if rec.Kind == faults.WorkerKill && rec.Point == faults.AfterComplete {
					landed++
				}
			}
			if landed != 2 {
				t.Errorf("%d kills landed after Complete, want 2 (records %+v)", landed, rv.Records)
			}
			if l.Lost != 0 || rv.Lost != 0 || l.UnfinishedAtDrain != 0 {
				t.Errorf("lost %d (at faults %d), unfinished %d: %v", l.Lost, rv.Lost, l.UnfinishedAtDrain, l.LostIDs)
			}
			if l.SettledByReadBack < int64(landed) {
				t.Errorf("settled by read-back %d, want >= %d", l.SettledByReadBack, landed)
			}
			if l.Completed != l.Acknowledged {
				t.Errorf("completed %d of %d acknowledged", l.Completed, l.Acknowledged)
			}
		})
	}
}
