package engine

import (
	"testing"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/hist"
)

// TestTimedFaults: on simulated time a fault's moment (window-relative and
// from the run's start) and its slowest recovery are restated in simulated
// time with the recovery distribution, so one run speaks one unit; on real
// time only the run-relative moment is added.
func TestTimedFaults(t *testing.T) {
	for _, tc := range []struct {
		speed                float64
		atS, runAtS, maxNs   float64
		recoveryMaxPerRecord int64
	}{
		{1, 2, 3, 500e6, 500e6},
		{60, 120, 180, 30e9, 30e9},
	} {
		sum := faults.Summary{Records: []faults.Record{{AtS: 2, PlannedS: 2.5, RecoveryMaxNs: 500e6}},
			RecoveryNs: map[string]float64{"max": 500e6, "count": 1}}
		h := hist.New()
		_ = h.RecordValue(500e6)
		timedFaults(&sum, h, time.Second, tc.speed)
		r := sum.Records[0]
		if r.PlannedS != 2.5*tc.speed {
			t.Errorf("speed %g: planned %g, want %g", tc.speed, r.PlannedS, 2.5*tc.speed)
		}
		if r.AtS != tc.atS || r.RunAtS != tc.runAtS || r.RecoveryMaxNs != tc.recoveryMaxPerRecord || sum.RecoveryNs["max"] != tc.maxNs || sum.RecoveryNs["count"] != 1 {
			t.Errorf("speed %g: at %g run_at %g record max %d, distribution %v; want %g %g %d %g", tc.speed, r.AtS, r.RunAtS,
				r.RecoveryMaxNs, sum.RecoveryNs, tc.atS, tc.runAtS, tc.recoveryMaxPerRecord, tc.maxNs)
		}
	}
}
