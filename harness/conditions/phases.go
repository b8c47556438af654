package conditions

import (
	"fmt"
	"strings"
	"time"
)

// Phase is one stretch of an open-loop load profile (the scenario's
// phases: list): a name, how long it lasts and the rate it offers, held
// constant, or reached by a straight ramp from the previous phase's rate
// when Ramp is set. The phases follow the warm-up, which runs at the first
// phase's rate, and make up the measured window.
type Phase struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration_ns"`
	Rate     float64       `json:"rate"`
	Ramp     bool          `json:"ramp,omitempty"`
	// Times, when the phase gave its rate as a multiple of the capacity
	// (rate: 1.5x): Rate is then Times x producers.capacity.
	Times float64 `json:"times_capacity,omitempty"`
}

// PhaseSpan is a phase placed on the run's clock: it runs from Start to
// End, both from the run's start (warm-up included).
type PhaseSpan struct {
	Phase
	Start, End time.Duration
	// From is the rate at Start (the previous phase's, on a ramp).
	From float64
}

// Spans places c's phases on the run's clock (none without phases).
func (c Config) Spans() []PhaseSpan {
	var out []PhaseSpan
	at, prev := c.Warmup, 0.0
	for i, p := range c.Phases {
		from := p.Rate
		if p.Ramp && i > 0 {
			from = prev
		}
		out = append(out, PhaseSpan{Phase: p, Start: at, End: at + p.Duration, From: from})
		at, prev = at+p.Duration, p.Rate
	}
	return out
}

// RateAt is the offered rate (jobs/s, all producers) at since from the
// run's start: producers.rate without phases; with them the warm-up runs
// at the first phase's rate, each phase at its own (or along its ramp),
// and after the last the last phase's rate holds.
func (c Config) RateAt(since time.Duration) float64 {
	spans := c.Spans()
	if len(spans) == 0 {
		return c.Producers.Rate
	}
	if since < spans[0].Start {
		return spans[0].From
	}
	for _, s := range spans {
		if since < s.End {
			if !s.Ramp || s.Duration <= 0 {
				return s.Rate
			}
			f := float64(since-s.Start) / float64(s.Duration)
			return s.From + (s.Rate-s.From)*f
		}
	}
	return spans[len(spans)-1].Rate
}

// MaxRate is the highest rate the profile offers (producers.rate without
// phases).
func (c Config) MaxRate() float64 {
	if len(c.Phases) == 0 {
		return c.Producers.Rate
	}
	m := 0.0
	for _, p := range c.Phases {
		m = max(m, p.Rate)
	}
	return m
}

// PhaseAt names the phase at since from the run's start: "warmup" before
// the window, the profile's phase in it (or "" without phases), "drain"
// after.
func (c Config) PhaseAt(since time.Duration) string {
	if since < c.Warmup {
		return "warmup"
	}
	for _, s := range c.Spans() {
		if since < s.End {
			return s.Name
		}
	}
	if since < c.Warmup+c.Duration {
		return ""
	}
	return "drain"
}

// SetCapacity puts the capacity mu (jobs/s) in c and turns the phases'
// relative rates (rate: 1.5x) into jobs/s; source says where mu came from.
func (c *Config) SetCapacity(mu float64, source string) {
	c.Producers.Capacity, c.Producers.CapacitySource = mu, source
	for i := range c.Phases {
		if c.Phases[i].Times > 0 {
			c.Phases[i].Rate = c.Phases[i].Times * mu
		}
	}
	if len(c.Phases) > 0 {
		c.Producers.Rate = c.Phases[0].Rate
	}
}

// CapacityPending says the phases give rates relative to a capacity a
// probe has yet to measure.
func (c Config) CapacityPending() bool {
	return c.Producers.CapacityProbe > 0 && c.Producers.Capacity <= 0
}

// phasesText states the profile for the conditions line: "steady 500/s
// 10s, burst 5000/s 5s, after ramp to 500/s 15s".
func (c Config) phasesText() string {
	var parts []string
	for _, p := range c.Phases {
		ramp := ""
		if p.Ramp {
			ramp = "ramp to "
		}
		rate := fmt.Sprintf("%g/s", p.Rate)
		switch {
		case p.Times > 0 && p.Rate > 0:
			rate = fmt.Sprintf("%gx=%.0f/s", p.Times, p.Rate)
		case p.Times > 0:
			rate = fmt.Sprintf("%gx capacity", p.Times)
		}
		parts = append(parts, fmt.Sprintf("%s %s%s %s", p.Name, ramp, rate, p.Duration))
	}
	text := strings.Join(parts, ", ")
	if mu := c.Producers.Capacity; mu > 0 {
		how := "given"
		if c.Producers.CapacityProbe > 0 {
			how = "measured closed loop"
		}
		text += fmt.Sprintf(" (capacity %.0f/s %s)", mu, how)
	}
	return text
}
