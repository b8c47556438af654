package runner

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestPhases: the producers follow a two-phase profile (constant arrivals
// so the counts are exact up to the edges), each phase gets its figures,
// and the phase after a surge its catch-up time.
func TestPhases(t *testing.T) {
	out := runScenario(t, "phases.yaml", `name: phases
seed: 3
warmup: 1s
drain: 10s
calibration: off
backends: [zset]
producers: {count: 2, arrivals: constant}
workers: {count: 2, concurrency: 4, handler: 1ms}
phases:
  - {name: low, duration: 3s, rate: 200}
  - {name: high, duration: 2s, rate: 600}
  - {name: back, duration: 3s, rate: 100}
`)
	r := out.Summary.Runs[0]
	if r.Status != "ok" || len(r.Phases) != 3 {
		t.Fatalf("status %s, phases %+v", r.Status, r.Phases)
	}
	for _, p := range r.Phases {
		// Each phase's jobs, by their intended time (the ledger's), follow
		// its rate: constant arrivals of two producers, one job either way
		// at each edge. (Its enqueued/s, by when the calls ended, followed
		// the rate within 15% until a loaded machine starved the producers
		// of a CPU: 464/s against 600 in a 2 s phase.)
		want := p.OfferedPerS * (p.EndS - p.StartS)
		if got := float64(p.Jobs.Acknowledged); math.Abs(got-want) > 0.02*want+2 || p.EnqueuedPerS <= 0 {
			t.Errorf("phase %s: %.0f jobs intended in it, want %.0f (%.0f/s offered); enqueued %.0f/s", p.Name, got, want, p.OfferedPerS, p.EnqueuedPerS)
		}
	}
	if r.Phases[0].CatchUpS != nil || r.Phases[2].CatchUpS == nil {
		t.Errorf("catch-up: %v %v, want only after the surge", r.Phases[0].CatchUpS, r.Phases[2].CatchUpS)
	}
	if got := r.Window.MeasuredS; math.Abs(got-8) > 0.5 {
		t.Errorf("measured window %.1fs, want the phases' 8s", got)
	}
	var acked int64
	for _, p := range r.Phases {
		acked += p.Jobs.Acknowledged
		if p.LatencyNs["e2e"]["count"] == 0 || p.CommandsPerJob <= 0 || p.RedisCPUPerJobUs <= 0 {
			t.Errorf("phase %s: latencies %v, %.2f commands and %.1fµs Redis CPU a job: want each measured", p.Name, p.LatencyNs, p.CommandsPerJob, p.RedisCPUPerJobUs)
		}
	}
	// The phases' ledgers together hold the window's jobs (the warm-up's
	// are in none).
	if want := int64(200*3 + 600*2 + 100*3); math.Abs(float64(acked-want)) > 0.05*float64(want) {
		t.Errorf("phases' ledgers hold %d jobs, want about %d", acked, want)
	}
}

// TestCapacityProbe: producers.capacity: measure runs a closed-loop probe
// of the same backend before the run; a worker-bound store (4 slots of
// 10ms: at most 400 jobs/s) measures near its bound, the phases' relative
// rates follow it, and the recovery gets the fluid model.
func TestCapacityProbe(t *testing.T) {
	out := runScenario(t, "probe.yaml", `name: probe
seed: 3
warmup: 1s
drain: 20s
calibration: off
backends: [zset]
producers: {count: 2, arrivals: constant, capacity: measure(1s)}
workers: {count: 1, concurrency: 4, handler: 10ms}
phases:
  - {name: low, duration: 1s, rate: 0.5x}
  - {name: over, duration: 2s, rate: 1.5x}
  - {name: back, duration: 2s, rate: 0.5x}
`)
	r := out.Summary.Runs[0]
	mu := r.Config.Producers.Capacity
	if r.Status != "ok" || mu < 200 || mu > 420 || !strings.HasPrefix(r.Config.Producers.CapacitySource, "measured") {
		t.Fatalf("status %s (%s), capacity %.0f (%s): want a measure under the 400 jobs/s bound", r.Status, r.Error, mu, r.Config.Producers.CapacitySource)
	}
	if got := r.Config.Phases[1].Rate; math.Abs(got-1.5*mu) > 1e-6 {
		t.Errorf("overload rate %g, want 1.5 x %g", got, mu)
	}
	if m := r.Phases[2].Model; m == nil || m.CapacityPerS != mu {
		t.Errorf("recovery's fluid model %+v, want one on the measured capacity", m)
	}
}

// TestPhasesUndelivered: a profile the producers cannot send (one producer
// calling one job at a time against 50,000 jobs/s) is a finding in the
// run's problems, not a quiet pass at the rate they managed.
func TestPhasesUndelivered(t *testing.T) {
	out := runScenario(t, "impossible.yaml", `name: impossible
seed: 3
warmup: 500ms
drain: 10s
calibration: off
backends: [zset]
producers: {count: 1, batch: 1, arrivals: constant}
workers: {count: 2, concurrency: 4, handler: 0}
phases:
  - {name: flood, duration: 300ms, rate: 50000}
`)
	r := out.Summary.Runs[0]
	found := false
	for _, p := range r.Problems {
		found = found || strings.Contains(p, "phase flood: the producers enqueued")
	}
	if !found {
		t.Errorf("problems %q: want the undelivered profile named", r.Problems)
	}
}

// TestFluidModel: an overload at 1.5x a capacity of 100 jobs/s for 10s,
// then 0.7x: the model predicts a backlog of 500 and a catch-up of 16.7s;
// a measured catch-up within 25% passes, one beyond it is flagged.
func TestFluidModel(t *testing.T) {
	for _, tc := range []struct {
		measured float64
		flagged  bool
	}{{17, false}, {30, true}, {-1, true}} {
		c := tc.measured
		ph := []summary.PhaseResult{
			{Name: "overload", StartS: 5, EndS: 15, OfferedPerS: 150, CompletedPerS: 98},
			{Name: "recovery", StartS: 15, EndS: 45, OfferedPerS: 70, CatchUpS: &c},
		}
		setFluidModel(ph, 100)
		m := ph[1].Model
		if m == nil || m.BacklogJobs != 500 || math.Abs(m.CatchUpS-500.0/30) > 1e-9 || ph[0].OfCapacity != 0.98 || ph[0].Degraded != "" {
			t.Fatalf("model %+v, overload share %g (%q)", m, ph[0].OfCapacity, ph[0].Degraded)
		}
		if (ph[1].ModelGap != "") != tc.flagged {
			t.Errorf("measured %gs: gap %q, want flagged %v", tc.measured, ph[1].ModelGap, tc.flagged)
		}
	}
}

// TestDegraded: an overload sustained under 0.95 of the capacity is said,
// with by how much.
func TestDegraded(t *testing.T) {
	ph := []summary.PhaseResult{{Name: "overload", StartS: 5, EndS: 15, OfferedPerS: 150, CompletedPerS: 80}}
	setFluidModel(ph, 100)
	if !strings.Contains(ph[0].Degraded, "sustained 0.80 of its capacity") || !strings.Contains(ph[0].Degraded, "by 20%") {
		t.Errorf("degraded %q", ph[0].Degraded)
	}
}

// TestKnee: a ramp's knee is the offered rate of its first second whose
// e2e p99 went over slo.e2e_p99; a ramp that held it has none.
func TestKnee(t *testing.T) {
	c := conditions.Config{Warmup: time.Second, Duration: 10 * time.Second, SLO: conditions.SLOConfig{E2EP99: 50 * time.Millisecond},
		Phases: []conditions.Phase{{Name: "base", Duration: 2 * time.Second, Rate: 100}, {Name: "up", Duration: 8 * time.Second, Rate: 900, Ramp: true}}}
	series := []engine.SeriesPoint{
		{Second: 2, Phase: "base", E2ESamples: 10, E2EP99Ms: 80}, // over the bound, but no ramp
		{Second: 4, Phase: "up", E2ESamples: 10, E2EP99Ms: 20},
		{Second: 7, Phase: "up", E2ESamples: 10, E2EP99Ms: 60},
		{Second: 8, Phase: "up", E2ESamples: 10, E2EP99Ms: 90},
	}
	ph := phaseResults(c, &engine.Result{Series: series})
	if ph[0].KneePerS != nil || ph[1].KneePerS == nil || *ph[1].KneePerS != 500 {
		t.Fatalf("knees %v %v, want none and 500 (the ramp's rate 4s in)", ph[0].KneePerS, ph[1].KneePerS)
	}
	c.SLO.E2EP99 = time.Second
	if ph = phaseResults(c, &engine.Result{Series: series}); ph[1].KneePerS == nil || *ph[1].KneePerS != -1 {
		t.Errorf("a ramp that held the bound: %v, want -1", ph[1].KneePerS)
	}
}

// TestPhaseThresholdsChecked: a threshold scoped to a phase the profile
// lacks, in a scenario without phases, or in multiples of a capacity
// nothing gives, fails before the plan with the file, line and phase.
func TestPhaseThresholdsChecked(t *testing.T) {
	const phases = "phases:\n  - {name: overload, duration: 1s, rate: 100}\n"
	for _, tc := range []struct{ name, src, want string }{
		{"unknown phase", "backends: [zset]\nthresholds:\n  - \"overlaod: catchup_s < 30\"\n" + phases, `"overlaod" names no phase (did you mean "overload"?)`},
		{"no phases", "backends: [zset]\nthresholds:\n  - \"overload: catchup_s < 30\"\n", "the scenario has no phases"},
		{"no capacity", "backends: [zset]\nthresholds:\n  - \"overload: completed_per_s > 0.9 capacity\"\n" + phases, "needs producers.capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := scenario.ParseScenario("th.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseThresholds(s)
			var ce *scenario.ConfigError
			if !errors.As(err, &ce) || ce.File != "th.yaml" || ce.Line != 3 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want th.yaml line 3 and %q", err, tc.want)
			}
		})
	}
}

// TestPhaseWorkload: a phase's handler override runs on its own jobs
// only: the slow phase's e2e p50 is at least its 30ms handler, the quick
// phases' far under it.
func TestPhaseWorkload(t *testing.T) {
	out := runScenario(t, "work.yaml", `name: work
seed: 3
drain: 10s
calibration: off
backends: [zset]
producers: {count: 2, arrivals: constant}
workers: {count: 2, concurrency: 16, handler: 200us}
phases:
  - {name: warmup, duration: 500ms, rate: 100}
  - {name: quick, duration: 2s, rate: 200}
  - {name: slow, duration: 2s, rate: 200, handler: 30ms}
  - {name: again, duration: 2s, rate: 200}
`)
	r := out.Summary.Runs[0]
	if r.Status != "ok" || len(r.Phases) != 3 {
		t.Fatalf("status %s, phases %+v", r.Status, r.Phases)
	}
	p50 := func(i int) float64 { return r.Phases[i].LatencyNs["e2e"]["p50"] / 1e6 }
	if p50(1) < 30 || p50(0) > 15 || p50(2) > 15 {
		t.Errorf("e2e p50 by phase: %.1f, %.1f, %.1f ms; want the slow phase's alone at 30ms or more", p50(0), p50(1), p50(2))
	}
}
