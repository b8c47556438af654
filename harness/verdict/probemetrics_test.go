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
