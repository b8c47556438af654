package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/hist"
)

func TestStallNote(t *testing.T) {
	for _, tc := range []struct {
		name              string
		stall, lease      time.Duration
		reruns, recovered int64
		flagged           bool
	}{
		{"stall longer than the real lease, reruns", 80 * time.Millisecond, 50 * time.Millisecond, 3, 0, true},
		{"stall longer, recoveries only", 80 * time.Millisecond, 50 * time.Millisecond, 0, 2, true},
		{"stall longer, nothing ran again", 80 * time.Millisecond, 50 * time.Millisecond, 0, 0, false},
		{"stall shorter than the lease", 10 * time.Millisecond, 50 * time.Millisecond, 3, 2, false},
		{"no meter (real time)", 0, 50 * time.Millisecond, 3, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := stallNote(tc.stall, tc.lease, tc.reruns, tc.recovered, 600)
			if (got != "") != tc.flagged || tc.flagged && !strings.HasPrefix(got, "stall:") {
				t.Errorf("stallNote = %q, want flagged %v", got, tc.flagged)
			}
		})
	}
}

func TestStallMeterSeesAStall(t *testing.T) {
	m := startStallMeter()
	time.Sleep(20 * time.Millisecond) // let it tick
	// A goroutine that hogs no CPU cannot stall the meter; what it measures
	// is its own oversleep, never below zero.
	if got := m.stop(); got < 0 {
		t.Fatalf("max stall %v < 0", got)
	}
	var none *stallMeter
	if none.stop() != 0 {
		t.Fatal("a nil meter reports a stall")
	}
}

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
		sum := faults.Summary{Records: []faults.Record{{AtS: 2, RecoveryMaxNs: 500e6}},
			RecoveryNs: map[string]float64{"max": 500e6, "count": 1}}
		h := hist.New()
		_ = h.RecordValue(500e6)
		timedFaults(&sum, h, time.Second, tc.speed)
		r := sum.Records[0]
		if r.AtS != tc.atS || r.RunAtS != tc.runAtS || r.RecoveryMaxNs != tc.recoveryMaxPerRecord || sum.RecoveryNs["max"] != tc.maxNs || sum.RecoveryNs["count"] != 1 {
			t.Errorf("speed %g: at %g run_at %g record max %d, distribution %v; want %g %g %d %g", tc.speed, r.AtS, r.RunAtS,
				r.RecoveryMaxNs, sum.RecoveryNs, tc.atS, tc.runAtS, tc.recoveryMaxPerRecord, tc.maxNs)
		}
	}
}
