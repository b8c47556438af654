package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/trace"
)

// TestTraceReplay: a synthetic trace (a swing and a 2x burst, about 900
// jobs/s for 6s) replayed against zset: the jobs sent (by when their
// Enqueue call started, timeseries.csv's sent) follow the trace's
// arrivals second by second, and every job is accounted for.
func TestTraceReplay(t *testing.T) {
	dir := t.TempDir()
	s := trace.DefaultSynth()
	s.Duration, s.Rate, s.Period, s.Bursts, s.BurstX, s.Seed = 6*time.Second, 900, 6*time.Second, 1, 2, 4
	f, err := os.Create(filepath.Join(dir, "t.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(filepath.Join(dir, "t.csv"))
	tr, err := trace.Parse("t.csv", data, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := runScenario(t, filepath.Join(dir, "replay.yaml"), `name: replay
seed: 3
warmup: 1s
drain: 10s
calibration: off
backends: [zset]
producers: {count: 4, trace: t.csv}
workers: {count: 4, concurrency: 8, handler: 200us}
`)
	r := out.Summary.Runs[0]
	if r.Status != "ok" || r.Ledger.Acknowledged != int64(len(tr.Arrivals)) {
		t.Fatalf("status %s (%s), %d acknowledged of the trace's %d", r.Status, r.Error, r.Ledger.Acknowledged, len(tr.Arrivals))
	}
	sent := seriesColumn(t, filepath.Join(out.Dir, "timeseries.csv"), "sent")
	// Cumulative, second by second: an Enqueue starts at or after its
	// intended time, so the jobs sent by the end of a second never run
	// ahead of the trace's arrivals by then (2% for the second's edge),
	// and they lag it by no more than the arrivals of the last half second
	// plus the producers' worst schedule lag (a producer starved of a CPU
	// sends late and catches up: on a loaded 2-core machine by 0.7 s). A
	// replay that ignored the trace's times runs ahead in its quiet
	// seconds, one that stretched them falls behind.
	lag := time.Duration(r.LatencyNs["schedule_lag"]["max"])
	per := tr.PerSecond()
	var cumWant, cumGot int64
	for i, want := range per {
		cumWant += int64(want)
		cumGot += sent[i+1]
		if ahead := float64(cumGot - cumWant); ahead > 0.02*float64(want) {
			t.Errorf("second %d: %d sent by its end, the trace has %d: ahead by more than 2%% of its %d", i+1, cumGot, cumWant, want)
		}
		if behind, allowed := cumWant-cumGot, trailing(per, i, lag+500*time.Millisecond); float64(behind) > allowed {
			t.Errorf("second %d: %d sent by its end, the trace has %d: behind by %d, more than the %.0f arrivals of the last %v",
				i+1, cumGot, cumWant, behind, allowed, lag+500*time.Millisecond)
		}
	}
}

// trailing is the arrivals in the last d up to the end of second i of
// per (arrivals per second), a partial second pro rata.
func trailing(per []int, i int, d time.Duration) float64 {
	var n float64
	for ; i >= 0 && d > 0; i-- {
		f := min(d.Seconds(), 1)
		n += f * float64(per[i])
		d -= time.Second
	}
	return n
}

// seriesColumn reads a column of timeseries.csv by second (one run).
func seriesColumn(t *testing.T, path, name string) map[int]int64 {
	t.Helper()
	rows, col := readSeries(t, path)
	out := map[int]int64{}
	for _, row := range rows {
		sec, _ := strconv.Atoi(row[col["second"]])
		n, _ := strconv.ParseInt(row[col[name]], 10, 64)
		out[sec] += n
	}
	return out
}

// TestDepthMode: producers.mode depth keeps the due backlog near its depth
// (50 here) while a worker-bound store (4 slots of 5ms) drains it, so the
// throughput is what that depth sustains.
func TestDepthMode(t *testing.T) {
	out := runScenario(t, "depth.yaml", `name: depth
seed: 3
warmup: 1s
duration: 3s
drain: 10s
calibration: off
backends: [zset]
producers: {count: 2, mode: depth, depth: 50}
workers: {count: 1, concurrency: 4, handler: 5ms}
`)
	r := out.Summary.Runs[0]
	if r.Status != "ok" || r.Throughput.Completed < 200 || !strings.Contains(r.Conditions, "depth loop (due backlog kept at 50)") {
		t.Fatalf("status %s, %.0f jobs/s, conditions %q", r.Status, r.Throughput.Completed, r.Conditions)
	}
	due := seriesColumn(t, filepath.Join(out.Dir, "timeseries.csv"), "backlog_due")
	for s := 2; s <= 4; s++ {
		if n := due[s]; n < 30 || n > 60 {
			t.Errorf("second %d: due backlog %d, want about the depth 50", s, n)
		}
	}
}
