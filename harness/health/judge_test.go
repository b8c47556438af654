package health

import (
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

// TestJudge: each figure past its threshold makes the run suspect, naming
// the figure; below every threshold it is healthy.
func TestJudge(t *testing.T) {
	lat := func(lagNs float64) map[string]map[string]float64 {
		return map[string]map[string]float64{"schedule_lag": {"p99": lagNs}}
	}
	for _, tc := range []struct {
		name  string
		h     summary.HarnessCost
		lag   float64
		stall string
		want  string // "" healthy; else a reason contains it
	}{
		{"quiet make bench", summary.HarnessCost{RunQueueWaitMsPerS: 350, CollectorTickMaxNs: int64(27 * time.Millisecond)}, 0.7e6, "", ""},
		{"starved of CPU", summary.HarnessCost{RunQueueWaitMsPerS: 1093}, 0.7e6, "", "waited 1093 ms/s for a CPU"},
		{"producers late", summary.HarnessCost{RunQueueWaitMsPerS: 300}, 506e6, "", "producers started 506ms (real) late"},
		{"slow collector", summary.HarnessCost{CollectorTickMaxNs: int64(400 * time.Millisecond)}, 0, "", "collector tick took 400ms"},
		{"stall on simulated time", summary.HarnessCost{}, 0, "stall: the harness stalled", "stall: the harness stalled"},
		{"busy host, all cores busy", summary.HarnessCost{RunQueueWaitMsPerS: 350, HostStealPercent: 5}, 0.7e6, "", ""},
		{"host took the CPUs", summary.HarnessCost{RunQueueWaitMsPerS: 350, HostStealPercent: 23}, 0.7e6, "", "hypervisor took 23%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Judge(tc.h, lat(tc.lag), tc.stall, 0, 1)
			if tc.want == "" {
				if h.IsSuspect() {
					t.Fatalf("suspect: %s", h.Text())
				}
				return
			}
			if !h.IsSuspect() || !strings.Contains(h.Text(), tc.want) {
				t.Fatalf("health %q, want suspect naming %q", h.Text(), tc.want)
			}
		})
	}
	// Producers late because the store's Enqueue calls filled their
	// interval (stream at 1500 jobs/s: 2 producers calling every 1.33ms):
	// the store's lateness, not the machine's.
	slow := map[string]map[string]float64{"schedule_lag": {"p99": 506e6}, "enqueue": {"mean": 0.9e6}}
	if h := Judge(summary.HarnessCost{RunQueueWaitMsPerS: 300}, slow, "", 1333*time.Microsecond, 1); h.IsSuspect() {
		t.Errorf("store-bound producers judged suspect: %s", h.Text())
	}
	fast := map[string]map[string]float64{"schedule_lag": {"p99": 506e6}, "enqueue": {"mean": 0.1e6}}
	if h := Judge(summary.HarnessCost{RunQueueWaitMsPerS: 300}, fast, "", 1333*time.Microsecond, 1); !h.IsSuspect() {
		t.Error("producers late with quick Enqueue calls judged healthy")
	}
	h := Judge(summary.HarnessCost{}, nil, "", 0, 1)
	JudgeCalibration(h, 3.83e6)
	if !h.IsSuspect() || !strings.Contains(h.Text(), "the harness alone") {
		t.Errorf("a slow calibration: %q", h.Text())
	}
	h = Judge(summary.HarnessCost{}, nil, "", 0, 1)
	JudgeCalibration(h, 112e3)
	if h.IsSuspect() {
		t.Errorf("a quiet calibration made the run suspect: %q", h.Text())
	}
}
