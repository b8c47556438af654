package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestPrefillSweep: a prefill swept over two sizes loads each backlog
// before the run (the ledger runs and checks its due jobs, the delayed
// ones stay out of it) and draws the metric-against-prefill figures.
func TestPrefillSweep(t *testing.T) {
	src := `name: sweep
seed: 5
duration: 700ms
warmup: 200ms
drain: 5s
calibration: off
redis: {mode: embedded}
backends: [zset]
producers: {count: 1, mode: closed, max_backlog: 500, batch: 10, payload: 16, prefill: [300, 3000], prefill_delayed: 0.2}
workers: {count: 4, concurrency: 8, claim_batch: 10, claim_wait: 200ms, handler: 0}
`
	s, err := scenario.ParseScenario("sweep.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), s, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{300, 3000} {
		r := out.Summary.Runs[i]
		if r.Status != summary.StatusOK || r.Prefill == nil || r.Prefill.Jobs != want || r.Prefill.Delayed != want/5 {
			t.Fatalf("run %s: status %s prefill %+v, want %d jobs, %d delayed", r.ID, r.Status, r.Prefill, want, want/5)
		}
		l := r.Ledger
		if l.Lost != 0 || l.Unexpected != 0 || l.Acknowledged < want-want/5 {
			t.Errorf("run %s: ledger %+v: want the %d due prefill jobs acknowledged, none lost", r.ID, l, want-want/5)
		}
	}
	for _, f := range []string{"sweep-producers_prefill-throughput.png", "sweep-producers_prefill-claim_p99.svg"} {
		if st, err := os.Stat(filepath.Join(out.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
