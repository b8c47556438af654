package output

import (
	"testing"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/summary"
)

// TestOfferedLines: runs that offered the same profile share one offered
// line; a backend whose measured capacity set its rates gets its own,
// named for it.
func TestOfferedLines(t *testing.T) {
	run := func(label string, mu float64) summary.RunSummary {
		c := conditions.Config{Warmup: time.Second, Duration: 4 * time.Second}
		c.Producers.Mode = "open"
		c.Phases = []conditions.Phase{{Name: "a", Duration: 2 * time.Second, Times: 0.7}, {Name: "b", Duration: 2 * time.Second, Times: 1.5}}
		c.SetCapacity(mu, "measured")
		return summary.RunSummary{Label: label, Config: c}
	}
	one := offeredLines([]summary.RunSummary{run("zset", 3000), run("stream", 3030)})
	if len(one) != 1 || one[0].Label != "offered" {
		t.Errorf("two runs 1%% apart: %d lines (%q), want one offered", len(one), one[0].Label)
	}
	two := offeredLines([]summary.RunSummary{run("zset", 3000), run("stream", 3030), run("asynq", 7000)})
	if len(two) != 2 || two[0].Label != "offered zset, stream" || two[1].Label != "offered asynq" {
		t.Errorf("asynq at its own capacity: %+v", two)
	}
	// The line follows the profile: 0.7 x 3000 in the first phase.
	if y := one[0].Y[len(one[0].Y)/2-2]; y != 2100 {
		t.Errorf("offered %g in the first phase, want 2100", y)
	}
}
