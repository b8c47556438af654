package clock_test

import (
	"testing"
	"time"

	"github.com/aebench/aebench/clock"
)

func TestScaled(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := clock.NewScaled(origin, 60)
	time.Sleep(20 * time.Millisecond)
	// 20ms of real time is at least 1.2s simulated.
	if got := s.Now().Sub(origin); got < 1200*time.Millisecond {
		t.Fatalf("after 20ms real, simulated %v, want >= 1.2s", got)
	}
	sim := origin.Add(time.Minute)
	if back := s.Sim(s.Real(sim)); back.Sub(sim).Abs() > time.Microsecond {
		t.Fatalf("Sim(Real(t)) = %v, want %v", back, sim)
	}
	for _, tc := range []struct {
		c    clock.Clock
		d    time.Duration
		want time.Duration
	}{
		{clock.Real{}, time.Minute, time.Minute},
		{s, time.Minute, time.Second},
		{clock.NewScaled(origin, 1), time.Second, time.Second},
	} {
		if got := clock.RealDuration(tc.c, tc.d); got != tc.want {
			t.Errorf("RealDuration(%T, %v) = %v, want %v", tc.c, tc.d, got, tc.want)
		}
	}
}
