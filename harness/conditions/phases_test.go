package conditions

import (
	"testing"
	"time"
)

// TestRateAt: the warm-up runs at the first phase's rate, a phase at its
// own, a ramp climbs in a straight line from the previous phase's rate,
// and after the last phase its rate holds.
func TestRateAt(t *testing.T) {
	c := Config{Warmup: 2 * time.Second, Phases: []Phase{
		{Name: "steady", Duration: 4 * time.Second, Rate: 100},
		{Name: "ramp", Duration: 4 * time.Second, Rate: 500, Ramp: true},
		{Name: "burst", Duration: time.Second, Rate: 1000},
	}}
	for _, tc := range []struct {
		at    time.Duration
		rate  float64
		phase string
	}{
		{0, 100, "warmup"}, {3 * time.Second, 100, "steady"}, {6 * time.Second, 100, "ramp"},
		{8 * time.Second, 300, "ramp"}, {10 * time.Second, 1000, "burst"}, {20 * time.Second, 1000, "drain"},
	} {
		c.Duration = 9 * time.Second
		if got, ph := c.RateAt(tc.at), c.PhaseAt(tc.at); got != tc.rate || ph != tc.phase {
			t.Errorf("at %v: rate %g phase %q, want %g %q", tc.at, got, ph, tc.rate, tc.phase)
		}
	}
	if m := c.MaxRate(); m != 1000 {
		t.Errorf("max rate %g", m)
	}
	rt := Config{Time: TimeConfig{Base: TimeSimulated, Speed: 10}, Phases: c.Phases}.RealTime()
	if rt.Phases[0].Duration != 400*time.Millisecond || rt.Phases[0].Rate != 1000 || c.Phases[0].Rate != 100 {
		t.Errorf("real time: %+v (the scenario's own: %+v)", rt.Phases[0], c.Phases[0])
	}
}

// TestSetCapacityOwnPhases: the runs of a plan are copies of one Config
// sharing its Phases; a capacity set on one run turns its relative rates
// into jobs/s and leaves every other run's as they were.
func TestSetCapacityOwnPhases(t *testing.T) {
	plan := Config{Phases: []Phase{{Name: "overload", Duration: time.Minute, Times: 1.5}}}
	a, b := plan, plan
	a.SetCapacity(6000, "probe a")
	if a.Phases[0].Rate != 9000 || a.Producers.Rate != 9000 {
		t.Fatalf("run a: phase rate %g, producers %g; want 9000", a.Phases[0].Rate, a.Producers.Rate)
	}
	if b.Phases[0].Rate != 0 || plan.Phases[0].Rate != 0 {
		t.Fatalf("run a's capacity reached run b (%g) or the plan (%g)", b.Phases[0].Rate, plan.Phases[0].Rate)
	}
	b.SetCapacity(3000, "probe b")
	if a.Phases[0].Rate != 9000 || b.Phases[0].Rate != 4500 {
		t.Fatalf("after run b's probe: a %g, b %g; want 9000 and 4500", a.Phases[0].Rate, b.Phases[0].Rate)
	}
}
