package health

import (
	"strings"
	"testing"
	"time"
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
			got := StallNote(tc.stall, tc.lease, tc.reruns, tc.recovered, 600)
			if (got != "") != tc.flagged || tc.flagged && !strings.HasPrefix(got, "stall:") {
				t.Errorf("StallNote = %q, want flagged %v", got, tc.flagged)
			}
		})
	}
}

func TestStallMeterSeesAStall(t *testing.T) {
	m := StartStallMeter()
	time.Sleep(20 * time.Millisecond) // let it tick
	// A goroutine that hogs no CPU cannot stall the meter; what it measures
	// is its own oversleep, never below zero.
	if got := m.Stop(); got < 0 {
		t.Fatalf("max stall %v < 0", got)
	}
	var none *StallMeter
	if none.Stop() != 0 {
		t.Fatal("a nil meter reports a stall")
	}
}
