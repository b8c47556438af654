package runner

import (
	"context"
	"github.com/aebench/aebench/stats"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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

// TestMaxSustainable: the highest offered rate whose median e2e p99 stays
// under the bound while completions keep pace.
func TestMaxSustainable(t *testing.T) {
	group := func(backend string, rate, p99ms, done float64) stats.Group {
		return stats.Group{Backend: backend, Vary: []string{"producers.rate=" + strconv.FormatFloat(rate, 'f', -1, 64)},
			Metrics: []stats.Stat{{Metric: "e2e.p99", Median: p99ms * 1e6}, {Metric: "throughput", Median: done}}}
	}
	sum := &summary.Summary{Statistics: &stats.Block{Groups: []stats.Group{
		group("a", 1000, 5, 1000), group("a", 2000, 10, 1990), group("a", 4000, 80, 3990), // p99 over the bound at 4000
		group("b", 1000, 5, 1000), group("b", 2000, 10, 1500), // falls behind at 2000
		group("c", 1000, 60, 1000),                           // misses at the lowest rate
		group("d", 1000, 1, 1000), group("d", 2000, 1, 2000), // holds everywhere
	}}}
	got := maxSustainable(sum, 50*time.Millisecond)
	want := map[string][2]float64{"a": {2000, 4000}, "b": {1000, 2000}, "c": {0, 1000}, "d": {2000, 0}}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(got), len(want), got)
	}
	for _, r := range got {
		if w := want[r.Backend]; r.MaxRate != w[0] || r.FirstMiss != w[1] {
			t.Errorf("%s: max %g first miss %g, want %g and %g", r.Backend, r.MaxRate, r.FirstMiss, w[0], w[1])
		}
	}
	if maxSustainable(sum, 0) != nil {
		t.Error("no SLO: want no result")
	}
}
