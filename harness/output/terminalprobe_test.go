package output

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

func TestProbeTable(t *testing.T) {
	runs := []summary.RunSummary{{Label: "zset", Backend: "zset", Probe: &summary.PathProbe{
		Paths: map[string]summary.PathCost{
			"pop":      {Jobs: 300, CommandInstructions: 134800, Commands: 8, Scripts: map[string]float64{"claim": 1}},
			"complete": {Jobs: 300, CommandInstructions: 47300, Commands: 5, Scripts: map[string]float64{"complete": 1}},
		},
		RecordBytesPerJob: 684, StoredBytesPerJob: 817, ClientAllocsPerClaimedJob: 45.92}}}
	var b strings.Builder
	probeTable(&b, runs, 1)
	out := b.String()
	for _, want := range []string{"Path probe", "pop", "134800", "claim 1.00", "complete 1.00", "records 684 B a job (all keys 817 B), 45.92 allocations"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "pop") > strings.Index(out, "complete 1.00") {
		t.Errorf("paths not in a job's order:\n%s", out)
	}
	b.Reset()
	probeTable(&b, []summary.RunSummary{{Label: "zset"}}, 1)
	if b.Len() != 0 {
		t.Errorf("a run without a probe printed %q", b.String())
	}
}
