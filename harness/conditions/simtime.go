package conditions

import (
	"fmt"
	"time"

	"github.com/aebench/aebench/faults"
)

// The time bases of a scenario (time.base).
const (
	TimeReal      = "real"
	TimeSimulated = "simulated"
)

// TimeConfig is the run's time base. Under "simulated" every duration and
// rate of the scenario is in simulated time, which runs Speed times as
// fast as the wall clock: the stores decide on a clock.Scaled, the harness
// sleeps the scaled real time, and every latency is reported in simulated
// time (so one real millisecond of Redis round trip counts as Speed
// simulated milliseconds: Resolution).
type TimeConfig struct {
	Base  string  `json:"base"`
	Speed float64 `json:"speed"`
}

// Simulated reports whether the run is on simulated time.
func (c Config) Simulated() bool { return c.Time.Base == TimeSimulated }

// Speed is how many simulated seconds pass in one real second: 1 on real time.
func (c Config) Speed() float64 {
	if !c.Simulated() || c.Time.Speed <= 0 {
		return 1
	}
	return c.Time.Speed
}

// Resolution is what one real millisecond becomes in simulated time: the
// finest latency a simulated run can tell apart from the harness's and
// Redis's own (a round trip of 0.1-0.3ms real is that times Speed).
func (c Config) Resolution() time.Duration {
	return time.Duration(float64(time.Millisecond) * c.Speed())
}

// timeText states the time base for the conditions line, or "".
func (c Config) timeText() string {
	if !c.Simulated() {
		return ""
	}
	return fmt.Sprintf("simulated time x%g (1 real ms = %s simulated)", c.Speed(), c.Resolution())
}

// RealTime is the configuration the engine runs on the wall clock: every
// duration of the harness divided by Speed (run length, handler times,
// delays, claim waits, leases, heartbeats, maintenance intervals, the fault
// schedule) and the producers' rate multiplied by it. The store's own
// settings (Store, the backends' options) stay in simulated time: the
// stores run on the simulated clock, behind an adapter that converts what
// crosses between them and the engine (harness/simtime). Counts, sizes and
// probabilities do not change. On real time it returns c.
func (c Config) RealTime() Config {
	sp := c.Speed()
	if sp == 1 {
		return c
	}
	d := func(p *time.Duration) { *p = time.Duration(float64(*p) / sp) }
	for _, p := range []*time.Duration{&c.Duration, &c.Warmup, &c.Drain, &c.Producers.Align,
		&c.Workers.ClaimWait, &c.Workers.AckInterval, &c.Workers.Lease, &c.Workers.HeartbeatInterval,
		&c.Workers.RecoveryInterval, &c.Workers.MoverInterval} {
		d(p)
	}
	c.Producers.Rate *= sp
	c.WarmupRate *= sp
	ph := make([]Phase, len(c.Phases))
	for i, p := range c.Phases {
		p.Duration = time.Duration(float64(p.Duration) / sp)
		p.Rate *= sp
		if p.Work != nil {
			w := *p.Work
			w.Delay, w.Handler = w.Delay.scaled(1/sp), w.Handler.scaled(1/sp)
			p.Work = &w
		}
		ph[i] = p
	}
	if len(ph) > 0 {
		c.Phases = ph
	}
	c.Producers.Delay = c.Producers.Delay.scaled(1 / sp)
	c.Workers.Handler = c.Workers.Handler.scaled(1 / sp)
	fs := make([]faults.Fault, len(c.Faults))
	for i, f := range c.Faults {
		f.At = append([]time.Duration(nil), f.At...)
		for j := range f.At {
			d(&f.At[j])
		}
		for _, p := range []*time.Duration{&f.Every, &f.From, &f.Until, &f.ReplaceAfter, &f.Duration, &f.Latency, &f.Jitter} {
			d(p)
		}
		fs[i] = f
	}
	c.Faults = fs
	return c
}

// scaled is d with every parameter multiplied by k.
func (d Dist) scaled(k float64) Dist {
	d.A = time.Duration(float64(d.A) * k)
	d.B = time.Duration(float64(d.B) * k)
	return d
}
