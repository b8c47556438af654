package analysis

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/stats"
)

// Ratios divide by the references' mean over repeats in the same cell, and
// leave out runs without numbers.
func TestSetRatios(t *testing.T) {
	run := func(id, kind string, cell int, done, cpu, cmds float64, status string) summary.RunSummary {
		r := summary.RunSummary{ID: id, Label: strings.TrimRight(id, "0123456789"), Kind: kind, Cell: cell, Status: status}
		r.Throughput.Completed = done
		if cpu > 0 {
			r.Cost = &summary.CostReport{RedisCPUMicros: cpu, Commands: cmds}
		}
		return r
	}
	sum := &summary.Summary{Runs: []summary.RunSummary{
		run("floor1", "reference", 1, 1000, 10, 3, summary.StatusOK),
		run("floor2", "reference", 1, 3000, 30, 3, summary.StatusOK),
		run("zset1", "job store", 1, 1000, 40, 12, summary.StatusOK),
		run("asynq1", "peer", 1, 500, 50, 19, summary.StatusOK),
		run("zset2", "job store", 2, 1000, 40, 12, summary.StatusOK),
		run("stream1", "job store", 1, 0, 0, 0, summary.StatusNotApplicable),
		run("dual1", "job store", 1, 1005, 30, 14, summary.StatusOK),
		run("bucket1", "job store", 1, 900, 20, 10, summary.StatusOK),
		run("stream1", "job store", 1, 1200, 90, 30, summary.StatusOK),
	}}
	for i := range sum.Runs {
		sum.Runs[i].Throughput.Offered = 1000
	}
	SetRatios(sum)
	z := sum.Runs[2].Ratios
	// The floor's second repeat completed 3000 at 1000 offered: counted
	// up to the offered rate, the floor's jobs/s are 1000, as zset's.
	if x := z["floor"]; x.Throughput != 1 || x.RedisCPUPerJob != 2 || x.CommandsPerJob != 4 || x.Against != "floor" {
		t.Errorf("zset x floor %+v", x)
	}
	// dual is within 1% of zset's jobs/s and cheaper: the best strategy;
	// bucket is cheaper still but 10% slower; stream completed more than
	// the 1000 offered (catching up after falling behind) at a higher cost.
	if x := sum.Runs[3].Ratios["best strategy"]; x.Against != "dual" || x.Throughput != 500.0/1000 || x.RedisCPUPerJob != 50.0/30 {
		t.Errorf("asynq x best strategy %+v", x)
	}
	// Catching up is no merit: stream's 1200 at 1000 offered is 1.00x the
	// best, not 1.2x.
	if x := sum.Runs[8].Ratios["best strategy"]; x.Throughput != 1 {
		t.Errorf("stream, caught up above the offered rate, x best strategy %+v, want 1", x)
	}
	if _, ok := z["asynq"]; ok {
		t.Errorf("a peer is measured against the references, not one: %+v", z)
	}
	if x := sum.Runs[4].Ratios; len(x) != 1 || x["best strategy"].Against != "zset" {
		t.Errorf("cell 2 (no floor, one store): %+v", x)
	}
	if sum.Runs[5].Ratios != nil {
		t.Errorf("a run without numbers got ratios: %+v", sum.Runs[5].Ratios)
	}
}

// TestScalingCurve: efficiency against linear from the smallest cluster,
// the projection from the busiest master's CPU per job, and the bound.
func TestScalingCurve(t *testing.T) {
	cfg := conditions.Config{Producers: conditions.ProducerConfig{Mode: "closed"}, Store: conditions.StoreConfig{Shards: 6}}
	sum := &summary.Summary{Environment: summary.Environment{CPUs: 2}, Runs: []summary.RunSummary{
		{ID: "m1", Config: cfg}, {ID: "m2", Config: cfg}, {ID: "m4", Config: cfg}}}
	group := func(run string, masters string, tput, redis, busiest, client float64) stats.Group {
		st := func(name string, v float64) stats.Stat {
			return stats.Stat{Metric: name, Median: v, Values: []float64{v}}
		}
		return stats.Group{Backend: "zset", Vary: []string{"redis.masters=" + masters}, Runs: []string{run},
			Metrics: []stats.Stat{st("throughput", tput), st("redis_cpu_us_per_job", redis),
				st("busiest_master_cpu_us_per_job", busiest), st("client_cpu_us_per_job", client), st("lost", 0)}}
	}
	sum.Statistics = &stats.Block{Groups: []stats.Group{
		group("m2", "2", 15000, 60, 30, 20),
		group("m1", "1", 10000, 50, 50, 20),
		group("m4", "4", 12000, 80, 20, 40),
	}}
	pts := ScalingCurve(sum)
	if len(pts) != 3 || pts[0].Masters != 1 || pts[2].Masters != 4 {
		t.Fatalf("points %+v, want masters 1, 2, 4 in order", pts)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, want := range []struct{ eff, proj, projEff float64 }{{1, 20000, 1}, {0.75, 100000.0 / 3, 100000.0 / 3 / 40000}, {0.3, 50000, 0.625}} {
		p := pts[i]
		if !near(p.Efficiency, want.eff) || !near(p.ProjectedRedis, want.proj) || !near(p.ProjectedEfficiency, want.projEff) {
			t.Errorf("masters %d: efficiency %g, projected %g (%g), want %g, %g (%g)", p.Masters, p.Efficiency, p.ProjectedRedis,
				p.ProjectedEfficiency, want.eff, want.proj, want.projEff)
		}
	}
	// 10000 jobs/s x 70 µs = 0.7 of 2 cores, busiest master 50%: neither.
	if !strings.HasPrefix(pts[0].Bound, "round trips") {
		t.Errorf("m1 bound %q", pts[0].Bound)
	}
	// 12000 x 120 µs = 1.44 cores: not yet 0.8 x 2; 15000 x 80 = 1.2.
	if pts[1].Shards != 6 {
		t.Errorf("shards %d, want 6", pts[1].Shards)
	}
	if ScalingCurve(&summary.Summary{Statistics: &stats.Block{Groups: []stats.Group{group("m1", "1", 1, 1, 1, 1)}}}) != nil {
		t.Error("a single cluster size is not a sweep")
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
	got := MaxSustainable(sum, 50*time.Millisecond)
	want := map[string][2]float64{"a": {2000, 4000}, "b": {1000, 2000}, "c": {0, 1000}, "d": {2000, 0}}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(got), len(want), got)
	}
	for _, r := range got {
		if w := want[r.Backend]; r.MaxRate != w[0] || r.FirstMiss != w[1] {
			t.Errorf("%s: max %g first miss %g, want %g and %g", r.Backend, r.MaxRate, r.FirstMiss, w[0], w[1])
		}
	}
	if MaxSustainable(sum, 0) != nil {
		t.Error("no SLO: want no result")
	}
}

// An open-loop run's client CPU a job splits by its own cell's open-loop
// calibration; a closed loop, another cell's calibration or a failed one
// leave it whole.
func TestSetClientSplit(t *testing.T) {
	run := func(id string, calib bool, cell int, mode string, cpu float64, status string) summary.RunSummary {
		r := summary.RunSummary{ID: id, Calibration: calib, Cell: cell, Status: status}
		r.Config.Producers.Mode = mode
		r.Harness.ClientCPUUsPerJob = cpu
		return r
	}
	sum := &summary.Summary{Runs: []summary.RunSummary{
		run("null1", true, 1, "open", 40, summary.StatusOK),
		run("zset1", false, 1, "open", 130, summary.StatusOK),
		run("dual1", false, 1, "open", 30, summary.StatusOK), // cheaper than the null run: all harness
		run("zset2", false, 2, "open", 130, summary.StatusOK),
		run("null3", true, 3, "closed", 10, summary.StatusOK),
		run("zset3", false, 3, "closed", 20, summary.StatusOK),
		run("null4", true, 4, "open", 40, summary.StatusFailed),
		run("zset4", false, 4, "open", 130, summary.StatusOK),
	}}
	SetClientSplit(sum)
	want := map[string][2]float64{"zset1": {40, 90}, "dual1": {30, 0}, "zset2": {}, "zset3": {}, "zset4": {}, "null1": {}}
	for _, r := range sum.Runs {
		w, ok := want[r.ID]
		if !ok {
			continue
		}
		if got := [2]float64{r.Harness.ClientHarnessUsPerJob, r.Harness.ClientStoreUsPerJob}; got != w {
			t.Errorf("%s: harness, store = %v, want %v", r.ID, got, w)
		}
	}
}
