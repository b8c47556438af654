package conditions

import (
	"fmt"
	"slices"
	"strconv"
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
	// Work, when the phase overrides the workload (delayed, delay,
	// handler, fail, payload), is the workload of its jobs: the jobs
	// intended in the phase, whenever they run.
	Work *Workload `json:"workload,omitempty"`
}

// Workload is a phase's jobs' workload: the run's, with the phase's
// overrides (Overrides names them).
type Workload struct {
	Overrides   []string `json:"overrides"`
	Delayed     float64  `json:"delayed_share"`
	Delay       Dist     `json:"-"`
	DelayText   string   `json:"delay"`
	Handler     Dist     `json:"-"`
	HandlerText string   `json:"handler"`
	Fail        float64  `json:"fail_probability"`
	Payload     int      `json:"payload_bytes"`
}

// JobName is the name a job intended in phase i carries when the phase
// overrides the workload ("bench@i"), so a worker (in any process) plays
// that phase's handler; "bench" otherwise.
func (c Config) JobName(i int) string {
	if i >= 0 && i < len(c.Phases) && c.Phases[i].Work != nil {
		return "bench@" + strconv.Itoa(i)
	}
	return "bench"
}

// JobNameAt is JobName(phase) with the failure window the job was
// intended in (WindowAt; -1 none) after a "~w", so a worker in any process
// plays the window's failures: "bench@1~w0".
func (c Config) JobNameAt(phase, window int) string {
	if window < 0 {
		return c.JobName(phase)
	}
	return c.JobName(phase) + "~w" + strconv.Itoa(window)
}

// WindowOfName is the failure window a JobNameAt carries (-1: none).
func WindowOfName(name string) int {
	_, w, ok := strings.Cut(name, "~w")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(w)
	if err != nil {
		return -1
	}
	return n
}

// PhaseOfName is the phase index a JobName carries (-1: none).
func PhaseOfName(name string) int {
	name, _, _ = strings.Cut(name, "~")
	_, i, ok := strings.Cut(name, "@")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(i)
	if err != nil {
		return -1
	}
	return n
}

// PhaseIndexAt is the index of the phase at since from the run's start
// (the first during the warm-up, the last after the window; -1 without
// phases).
func (c Config) PhaseIndexAt(since time.Duration) int {
	// On every Enqueue call: no Spans (it allocates), a walk of the phases.
	end := c.Warmup
	for i, p := range c.Phases {
		if end += p.Duration; since < end {
			return i
		}
	}
	return len(c.Phases) - 1
}

// WorkloadOf is phase i's workload, the run's where the phase overrides
// nothing.
func (c Config) WorkloadOf(i int) Workload {
	if i >= 0 && i < len(c.Phases) && c.Phases[i].Work != nil {
		return *c.Phases[i].Work
	}
	return Workload{Delayed: c.Producers.Delayed, Delay: c.Producers.Delay, DelayText: c.Producers.DelayText,
		Handler: c.Workers.Handler, HandlerText: c.Workers.HandlerText, Fail: c.Workers.Fail, Payload: c.Producers.Payload}
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
		if c.WarmupRate > 0 {
			return c.WarmupRate
		}
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
	m := c.WarmupRate
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
	// The runs of a plan share their Phases' backing array: written in
	// place, one backend's capacity became every run's (the next run's
	// conditions line, and an earlier run's summary, showed it).
	c.Phases = slices.Clone(c.Phases)
	for i := range c.Phases {
		if c.Phases[i].Times > 0 {
			c.Phases[i].Rate = c.Phases[i].Times * mu
		}
	}
	if c.WarmupTimes > 0 {
		c.WarmupRate = c.WarmupTimes * mu
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
	if c.WarmupRate > 0 || c.WarmupTimes > 0 {
		parts = append(parts, fmt.Sprintf("warmup %g/s %s", c.WarmupRate, c.Warmup))
	}
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
		part := fmt.Sprintf("%s %s%s %s", p.Name, ramp, rate, p.Duration)
		if w := p.Work; w != nil {
			part += " (" + w.text() + ")"
		}
		parts = append(parts, part)
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

// text states a workload's overrides: "handler uniform(50ms, 100ms),
// fail 30%".
func (w Workload) text() string {
	var parts []string
	for _, o := range w.Overrides {
		switch o {
		case "delayed":
			parts = append(parts, fmt.Sprintf("%g%% delayed", w.Delayed*100))
		case "delay":
			parts = append(parts, "delay "+w.DelayText)
		case "handler":
			parts = append(parts, "handler "+w.HandlerText)
		case "fail":
			parts = append(parts, fmt.Sprintf("fail %g%%", w.Fail*100))
		case "payload":
			parts = append(parts, fmt.Sprintf("payload %dB", w.Payload))
		}
	}
	return strings.Join(parts, ", ")
}

// RebuildPhaseHandlers rebuilds the phases' and the job kinds' samplers from their
// text, after a Config travelled as JSON (to a worker process), as the
// run's own handler is. The phases' workloads are copied, not shared.
func (c *Config) RebuildPhaseHandlers() error {
	c.Phases = slices.Clone(c.Phases)
	for i, p := range c.Phases {
		if p.Work == nil {
			continue
		}
		w := *p.Work
		h, err := ParseDist(w.HandlerText)
		if err != nil {
			return fmt.Errorf("phase %s handler %q: %w", p.Name, w.HandlerText, err)
		}
		w.Handler = h
		c.Phases[i].Work = &w
	}
	return c.rebuildKinds()
}

// rebuildKinds parses the job kinds' handler and delay again (a Config
// read from JSON, as a worker process gets it, keeps only their text) and
// builds the Zipf tables.
func (c *Config) rebuildKinds() error {
	c.Jobs = slices.Clone(c.Jobs)
	for i := range c.Jobs {
		k := &c.Jobs[i]
		h, err := ParseDist(k.HandlerText)
		if err != nil {
			return fmt.Errorf("job kind %s handler %q: %w", k.Name, k.HandlerText, err)
		}
		k.Handler = h
		if k.DelayText != "" {
			if k.Delay, err = ParseDist(k.DelayText); err != nil {
				return fmt.Errorf("job kind %s delay %q: %w", k.Name, k.DelayText, err)
			}
		}
	}
	c.PrepareMix()
	return nil
}
