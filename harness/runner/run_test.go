package runner

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aebench/aebench/harness/engine"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/redisserver"
)

// TestRunEveryBackend is the short end-to-end run of each registered
// backend on a spawned Redis, with plots and every output file.
func TestRunEveryBackend(t *testing.T) {
	var names, entries []string
	for _, b := range registry.Builtin().All() {
		if b.Kind == registry.KindCalibration || b.Driver != nil {
			continue // the drivers run their own workers: TestDriverPeers
		}
		names = append(names, b.Name)
		entry := b.Name
		if b.Name == "asynq" {
			// asynq's default polls (1 s idle, 5 s forwarder) would spend
			// the drain asleep.
			entry = "{name: asynq, options: {task_check_interval: 20ms, delayed_task_check_interval: 100ms}}"
		}
		entries = append(entries, entry)
	}
	src := fmt.Sprintf(`
name: e2e-test
duration: 1500ms
warmup: 500ms
drain: 15s
calibration: 1s
backends: [%s]
store: {backoff_base: 20ms, backoff_max: 200ms, poll_interval: 20ms}
producers: {rate: 300, delayed: 0.2, delay: "uniform(50ms, 300ms)", max_retries: 2}
workers: {count: 2, concurrency: 4, claim_batch: 2, claim_wait: 200ms, handler: "exponential(500us)", fail: 0.05, recovery_interval: 200ms}
`, strings.Join(entries, ", "))
	s, err := scenario.ParseScenario("e2e.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Stdout: &out, GitDir: ".."})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis: %v", err)
	}
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	if len(outcome.Failed)+len(outcome.Errored) > 0 || outcome.Interrupted {
		t.Fatalf("failed %v errored %v", outcome.Failed, outcome.Errored)
	}
	data, err := os.ReadFile(filepath.Join(outcome.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum summary.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outcome.Dir, "report.html")); err != nil {
		t.Errorf("report.html: %v", err)
	}
	if sum.SchemaVersion != summary.SchemaVersion || sum.Statistics == nil || !sum.Complete || len(sum.Runs) != len(names)+1 || len(sum.Environment.Redis) != 1 ||
		sum.Environment.Redis[0].Version == "" {
		t.Fatalf("summary: version %d complete %v runs %d env %+v", sum.SchemaVersion, sum.Complete, len(sum.Runs), sum.Environment)
	}
	if sum.HarnessOverhead == nil || len(sum.HarnessOverhead.Calibration) != 1 {
		t.Errorf("harness overhead %+v", sum.HarnessOverhead)
	}
	for _, r := range sum.Runs {
		// The floor keeps neither delayed jobs nor retries: it is not
		// applicable here, and says why.
		if r.Backend == "floor" {
			if r.Status != summary.StatusNotApplicable || !strings.Contains(r.NotApplicable, "delayed-jobs") ||
				!strings.Contains(r.NotApplicable, "retries") || !strings.Contains(out.String(), "floor: not applicable") {
				t.Errorf("floor: status %s, not applicable %q", r.Status, r.NotApplicable)
			}
			continue
		}
		l := r.Ledger
		if r.Status != summary.StatusOK || l.Lost != 0 || l.Unexpected != 0 || l.StartedEarly != 0 || l.Acknowledged == 0 ||
			l.Completed+l.DeadLettered != l.Acknowledged {
			t.Errorf("%s: status %s ledger %+v", r.ID, r.Status, l)
		}
		if r.LatencyNs["e2e"]["count"] == 0 || r.Throughput.Completed == 0 {
			t.Errorf("%s: no e2e latencies or throughput", r.ID)
		}
		if !r.Calibration && (r.Cost == nil || r.Cost.Commands == 0 || r.Cost.MemoryPerJobBytes <= 0) {
			t.Errorf("%s: cost %+v", r.ID, r.Cost)
		}
		for _, f := range append([]string{r.Files.HLog}, r.Files.HGRM["e2e"]) {
			if st, err := os.Stat(filepath.Join(outcome.Dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: file %q: %v", r.ID, f, err)
			}
		}
	}
	for _, f := range []string{"timeseries.csv", "e2e.png", "e2e.svg", "throughput.png", "lateness.png"} {
		if st, err := os.Stat(filepath.Join(outcome.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("file %s: %v", f, err)
		}
	}
	checkSeriesCells(t, filepath.Join(outcome.Dir, "timeseries.csv"))
	// The interval log reads back with HdrHistogram's own reader, and its
	// e2e intervals add up to the run's e2e count.
	tag := sum.Runs[1].Label + ".e2e"
	e2e := hlogCount(t, filepath.Join(outcome.Dir, sum.Runs[1].Files.HLog), tag)
	if want := int64(sum.Runs[1].LatencyNs["e2e"]["count"]); e2e != want || want == 0 {
		t.Errorf("hlog %s intervals hold %d values, summary says %d", tag, e2e, want)
	}
	if !strings.Contains(out.String(), "Redis cost per job") || !strings.Contains(out.String(), "harness overhead") {
		t.Errorf("table output lacks sections:\n%s", out.String())
	}
}

func TestRunInterrupted(t *testing.T) {
	s, err := scenario.ParseScenario("int.yaml", []byte("duration: 30s\nwarmup: 200ms\ncalibration: off\nbackends: [null]\nproducers: {rate: 200}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(800*time.Millisecond, cancel)
	start := time.Now()
	outcome, err := Run(ctx, s, Options{OutDir: t.TempDir(), NoPlots: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second { // the run asks for 30s
		t.Errorf("interrupted run took %v", d)
	}
	if !outcome.Interrupted || len(outcome.Summary.Runs) != 1 || outcome.Summary.Runs[0].Status != summary.StatusInterrupted {
		t.Fatalf("outcome %+v", outcome)
	}
	r := outcome.Summary.Runs[0]
	if r.Ledger.Acknowledged == 0 || r.Ledger.Lost != 0 || r.LatencyNs["e2e"]["count"] == 0 {
		t.Errorf("interrupted run lost its numbers: %+v", r.Ledger)
	}
	if _, err := os.Stat(filepath.Join(outcome.Dir, "summary.json")); err != nil {
		t.Error(err)
	}
}

// checkSeriesCells: a second with no e2e sample has empty percentile
// cells, never 0; a second with samples has both.
func checkSeriesCells(t *testing.T, path string) {
	t.Helper()
	rows, col := readSeries(t, path)
	var with, without int
	for _, r := range rows {
		n, p50, p99 := r[col["e2e_samples"]], r[col["e2e_p50_ms"]], r[col["e2e_p99_ms"]]
		switch {
		case n == "0" && (p50 != "" || p99 != ""):
			t.Errorf("second %s of %s: no e2e sample but p50 %q p99 %q", r[col["second"]], r[col["run"]], p50, p99)
		case n == "0":
			without++
		case p50 == "" || p99 == "":
			t.Errorf("second %s of %s: %s samples but empty percentiles", r[col["second"]], r[col["run"]], n)
		default:
			with++
		}
	}
	if with == 0 {
		t.Errorf("timeseries.csv: no second with e2e samples")
	}
	t.Logf("timeseries.csv: %d seconds with e2e samples, %d without", with, without)
}

// readSeries reads timeseries.csv: its data rows and its columns by name.
func readSeries(t *testing.T, path string) ([][]string, map[string]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("timeseries.csv: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	return rows[1:], col
}

// TestFitStatus: the status line never reaches the terminal's last column
// (a redraw would wrap), at any width.
func TestFitStatus(t *testing.T) {
	s := engine.StatusLine{RunID: "c2-r10-dual-seed000", Elapsed: 125 * time.Second, Phase: "measure",
		EnqPerSec: 123456, DonePerSec: 123400, Backlog: 1234567, InFlight: 8000, E2EP99: 1234 * time.Millisecond}
	for _, w := range []int{0, 10, 40, 80, 120, 200} {
		got := fitStatus(s, "run 3/12, ~4m10s left", w)
		if w > 0 && utf8.RuneCountInString(got) >= w {
			t.Errorf("width %d: %d runes: %q", w, utf8.RuneCountInString(got), got)
		}
		if (w == 0 || w >= 200) && !strings.Contains(got, "e2e p99 1234ms") {
			t.Errorf("width %d: full line expected, got %q", w, got)
		}
		if w >= 40 && !strings.HasPrefix(got, "run 3/12, ~4m10s left [c2-r10") {
			t.Errorf("width %d: the line does not start with the run's place: %q", w, got)
		}
	}
}

// hlogCount reads an interval log with HdrHistogram's own reader and adds
// up the samples of the intervals tagged tag.
func hlogCount(t *testing.T, path, tag string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := hdr.NewHistogramLogReader(f)
	var n int64
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if h == nil {
			return n
		}
		if h.Tag() == tag {
			n += h.TotalCount()
		}
	}
}
