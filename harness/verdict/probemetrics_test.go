package verdict

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

// TestPathRegressionNamesScripts: a path's regression names the scripts
// its window ran, as the candidate's probe recorded them.
func TestPathRegressionNamesScripts(t *testing.T) {
	probe := func(r *Run) {
		r.Record = &summary.RunSummary{Probe: &summary.PathProbe{Paths: map[string]summary.PathCost{
			"pop": {Jobs: 300, Scripts: map[string]float64{"claim": 1, "expire": 0.01}}}}}
	}
	c := Compare(set("path.pop.instructions", []float64{135000}, probe), set("path.pop.instructions", []float64{139500}, probe), CompareOptions{})
	if len(c.Regressions) != 1 {
		t.Fatalf("regressions %+v", c.Regressions)
	}
	if msg := c.Regressions[0].Message; !strings.Contains(msg, "path.pop.instructions") || !strings.Contains(msg, "[scripts: claim, expire]") {
		t.Errorf("message %q does not name the metric and its scripts, most called first", msg)
	}
}

// TestGatedMetricMissingFromCandidate: a candidate whose path probe failed
// (a gated counted metric the base has and it lacks) does not pass.
func TestGatedMetricMissingFromCandidate(t *testing.T) {
	base := set("path.pop.instructions", []float64{135000}, nil)
	cand := set("path.pop.instructions", []float64{135000}, nil)
	cand.Runs[0].Values = map[string]float64{"throughput": 20}
	base.Runs[0].Values["throughput"] = 20
	c := Compare(base, cand, CompareOptions{})
	if c.ExitCode() != ExitUsage || len(c.Incomplete) != 1 || !strings.Contains(c.Incomplete[0], "path.pop.instructions") {
		t.Errorf("exit %d, incomplete %v; want exit %d naming the metric", c.ExitCode(), c.Incomplete, ExitUsage)
	}
}
