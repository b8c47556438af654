package verdict

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

// TestEvaluateMix checks job-mix thresholds on runs of two queue policies:
// a policy scope checks its own runs only, and a figure no run has is
// reported unchecked.
func TestEvaluateMix(t *testing.T) {
	run := func(label, policy string, low, high int64) summary.RunSummary {
		return summary.RunSummary{ID: label + policy, Label: label + "-" + policy, Cell: 1, Repeat: 1, Kind: "job store", Status: summary.StatusOK,
			Mix: &summary.MixResult{QueuePolicy: policy, Queues: []summary.GroupResult{
				{Name: "high", CompletedInWindow: high}, {Name: "low", CompletedInWindow: low}},
				Tenants: &summary.TenantFairness{Jain: 0.97, QuietNoisyP95: 1.1}}}
	}
	runs := []summary.RunSummary{run("zset", "strict", 4, 96), run("zset", "weighted", 10, 90)}
	for _, tc := range []struct {
		expr    string
		crossed int
		want    string
	}{
		{"strict: queue.low.share_of_done < 0.07", 0, ""},
		{"weighted: queue.low.share_of_done > 0.08", 0, ""},
		{"queue.low.share_of_done < 0.07", 1, "zset-weighted"},
		{"strict: queue.low.share_of_done > 0.08", 1, "queue policy strict: queue.low.share_of_done"},
		{"tenant.jain > 0.99", 2, "tenant.jain"},
		{"tenant.quiet_noisy_p95 < 2", 0, ""},
		{"kind.long.e2e.p99 < 1s", 1, "cannot be checked"},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got := EvaluatePhases([]Threshold{th}, runs)
		if len(got) != tc.crossed {
			t.Errorf("%s: %d crossings %v, want %d", tc.expr, len(got), got, tc.crossed)
			continue
		}
		if tc.want != "" && !strings.Contains(got[0].Message, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.expr, got[0].Message, tc.want)
		}
	}
	for _, bad := range []string{"tenant.fairness > 1", "urgent: queue.low.share_of_done < 1", "kind.x.e2e.p99 < 1", "tenant.jain > +10%"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("%q parsed; want an error", bad)
		}
	}
}
