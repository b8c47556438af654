package runner

import (
	"fmt"
	"math"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// phaseResults sums a run's per-second series up phase by phase (the
// collector names each second's phase), in the run's time base.
func phaseResults(c conditions.Config, res *engine.Result) []summary.PhaseResult {
	spans := c.Spans()
	if len(spans) == 0 {
		return nil
	}
	series := res.Series
	speed := c.Speed()
	var out []summary.PhaseResult
	for i, sp := range spans {
		pr := summary.PhaseResult{Name: sp.Name, StartS: sp.Start.Seconds(), EndS: sp.End.Seconds(), OfferedPerS: (sp.From + sp.Rate) / 2}
		if i < len(res.PhaseTallies) {
			pr.Jobs = res.PhaseTallies[i]
		}
		if set := res.PhaseHists[sp.Name]; set != nil {
			pr.LatencyNs = map[string]map[string]float64{}
			for _, t := range []hist.Tag{hist.TagE2E, hist.TagQueueWait, hist.TagLateness, hist.TagScheduleLag} {
				if h := set[t]; h != nil && h.TotalCount() > 0 {
					pr.LatencyNs[t.String()] = report.Percentiles(h)
				}
			}
		}
		var n int
		var enq, done, cmds int64
		var cpu float64
		for _, p := range series {
			if p.Phase != sp.Name {
				continue
			}
			if n == 0 {
				pr.BacklogStart = p.BacklogDue
			}
			n++
			enq, done = enq+p.Enqueued, done+p.Completed
			cmds, cpu = cmds+p.RedisCommands, cpu+p.RedisCPUPercent/100
			pr.EvictedKeys += p.RedisEvicted
			pr.BacklogPeak, pr.BacklogEnd = max(pr.BacklogPeak, p.BacklogDue), p.BacklogDue
			pr.ScheduleLagP99WorstMs = max(pr.ScheduleLagP99WorstMs, p.ScheduleLagP99Ms)
			if p.E2ESamples > 0 {
				pr.E2EP99WorstMs = max(pr.E2EP99WorstMs, p.E2EP99Ms)
			}
		}
		if n > 0 {
			// A point is one real second: speed seconds of the run's base.
			secs := float64(n) * speed
			pr.EnqueuedPerS, pr.CompletedPerS = float64(enq)/secs, float64(done)/secs
		}
		if done > 0 {
			// A point's CPU share is of its real second.
			pr.RedisCPUPerJobUs, pr.CommandsPerJob = cpu*1e6/float64(done), float64(cmds)/float64(done)
		}
		out = append(out, pr)
	}
	setCatchUp(out, series, speed)
	setFluidModel(out, c.Producers.Capacity)
	setKnees(out, spans, c, series)
	return out
}

// setKnees finds each ramp's knee under slo.e2e_p99: the offered rate at
// the first second of the ramp whose e2e p99 went over the bound.
func setKnees(phases []summary.PhaseResult, spans []conditions.PhaseSpan, c conditions.Config, series []engine.SeriesPoint) {
	bound := c.SLO.E2EP99
	if bound <= 0 {
		return
	}
	for i, sp := range spans {
		if !sp.Ramp {
			continue
		}
		knee := -1.0
		for _, p := range series {
			if p.Phase == sp.Name && p.E2ESamples > 0 && p.E2EP99Ms*1e6 > float64(bound) {
				knee = c.RateAt(time.Duration(p.Second) * time.Second)
				break
			}
		}
		phases[i].KneePerS = &knee
	}
}

// setFluidModel puts the fluid model's prediction beside each recovery
// that follows an overload, when the scenario states the capacity, and
// flags a measured catch-up more than 25% away from it: the queue
// degrades under overload (its capacity falls as the backlog grows), or
// the harness is the bound; the overload's share of capacity tells which.
func setFluidModel(phases []summary.PhaseResult, mu float64) {
	if mu <= 0 {
		return
	}
	for i := range phases {
		p := &phases[i]
		if p.OfferedPerS > mu {
			p.OfCapacity = p.CompletedPerS / mu
			if p.OfCapacity < 0.95 {
				p.Degraded = fmt.Sprintf("sustained %.2f of its capacity (%.0f of %.0f jobs/s) while offered %.0f: it degrades under overload by %.0f%%",
					p.OfCapacity, p.CompletedPerS, mu, p.OfferedPerS, (1-p.OfCapacity)*100)
			}
		}
		if i == 0 {
			continue
		}
		over := phases[i-1]
		if over.OfferedPerS <= mu || p.OfferedPerS >= mu {
			continue
		}
		backlog := (over.OfferedPerS - mu) * (over.EndS - over.StartS)
		m := &summary.FluidModel{CapacityPerS: mu, BacklogJobs: backlog, CatchUpS: backlog / (mu - p.OfferedPerS)}
		p.Model = m
		if c := p.CatchUpS; c != nil && (*c < 0 || m.CatchUpS > 0 && math.Abs(*c-m.CatchUpS) > 0.25*m.CatchUpS) {
			p.ModelGap = modelGap(*c, m.CatchUpS, over.CompletedPerS/mu, p.CompletedPerS/mu)
		}
	}
}

// modelGap says why a measured catch-up is more than 25% from the fluid
// model's, from what the store sustained in the overload and in the
// recovery, as shares of the capacity: under it in the overload, the
// store degraded (or the harness bound it); over it, the capacity measured
// is below what the store does with a backlog (a short probe, or a store
// faster with a deep queue: batching, fuller claims).
func modelGap(measured, model, overShare, recoveryShare float64) string {
	got := fmt.Sprintf("%.1fs", measured)
	if measured < 0 {
		got = "no catch-up within the phase"
	}
	why := fmt.Sprintf("the store sustained %.2f of the capacity in the overload and %.2f in the recovery", overShare, recoveryShare)
	switch {
	case overShare < 0.95:
		why += ": it degraded under the overload (its capacity fell as the backlog grew), or the harness bound it"
	case overShare > 1.05:
		why += ": with a backlog it does more than the capacity measured (a deep queue fills its claims), so the model overstates the backlog"
	default:
		why += ": its rate changed with the backlog's depth in the recovery"
	}
	return fmt.Sprintf("catch-up %s against the fluid model's %.1fs: %s", got, model, why)
}

// setCatchUp gives each phase offered less than the one before it its
// catch-up time: from its start until the due backlog is back within 10%
// (or 10 jobs) of the backlog at the start of the phase before it, and
// the producers are back on their plan (lateness p99 within the health
// threshold): a store slow to take jobs leaves its backlog in the
// producers, not in Redis, and that backlog must drain too.
func setCatchUp(phases []summary.PhaseResult, series []engine.SeriesPoint, speed float64) {
	for i := 1; i < len(phases); i++ {
		ph, before := &phases[i], phases[i-1]
		if ph.OfferedPerS >= before.OfferedPerS {
			continue
		}
		band := max(float64(before.BacklogStart)*1.1, float64(before.BacklogStart)+10)
		t := -1.0
		for _, p := range series {
			s := float64(p.Second)
			if s < ph.StartS || p.Phase == "warmup" {
				continue
			}
			if float64(p.BacklogDue) <= band && p.ScheduleLagP99Ms <= float64(health.ScheduleLagP99)/1e6*speed {
				t = max(s-ph.StartS, 0)
				break
			}
		}
		ph.CatchUpS = &t
	}
}

// undelivered names each phase whose profile the producers did not
// deliver: they enqueued under 90% of its offered rate. Latency still
// counts from the plan, so the store is charged for what it did not take
// in time; the finding says the load was not the one asked for.
func undelivered(phases []summary.PhaseResult) []string {
	var out []string
	for _, p := range phases {
		if p.OfferedPerS > 0 && p.EnqueuedPerS < 0.9*p.OfferedPerS {
			out = append(out, fmt.Sprintf("phase %s: the producers enqueued %.0f jobs/s of the %.0f the profile offers (worst second's lateness p99 %.0fms): the load was not delivered as planned; add producers, or batch",
				p.Name, p.EnqueuedPerS, p.OfferedPerS, p.ScheduleLagP99WorstMs))
		}
	}
	return out
}
