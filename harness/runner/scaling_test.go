package runner

import (
	"math"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/stats"
)

// TestScalingCurve: efficiency against linear from the smallest cluster,
// the projection from the busiest master's CPU per job, and the bound.
func TestScalingCurve(t *testing.T) {
	cfg := scenario.Config{Producers: scenario.ProducerConfig{Mode: "closed"}, Store: scenario.StoreConfig{Shards: 6}}
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
	pts := scalingCurve(sum)
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
	var b strings.Builder
	printScaling(&b, pts)
	if !strings.Contains(b.String(), "projection: a model") {
		t.Errorf("printScaling:\n%s", b.String())
	}
	if scalingCurve(&summary.Summary{Statistics: &stats.Block{Groups: []stats.Group{group("m1", "1", 1, 1, 1, 1)}}}) != nil {
		t.Error("a single cluster size is not a sweep")
	}
}
