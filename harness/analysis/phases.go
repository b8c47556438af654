package analysis

import (
	"fmt"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// PhaseHeader heads the per-phase table (PhaseRow), in the terminal and
// on the page.
func PhaseHeader() []string {
	return []string{"backend", "phase", "from-to", "offered", "done/s", "backlog", "peak", "end", "e2e p50", "e2e p99", "qwait p99", "late p99",
		"lost/dup/early", "cmds/job", "cpu/job", "catch-up", "model"}
}

// PhaseRow is one phase of run name in the per-phase table.
func PhaseRow(name string, p summary.PhaseResult) []string {
	pct := func(tag, q string) string {
		if v, ok := p.LatencyNs[tag][q]; ok {
			return verdict.FormatNs(v)
		}
		return "-"
	}
	catch, model := "-", "-"
	if c := p.CatchUpS; c != nil {
		catch = fmt.Sprintf("%.1fs", *c)
		if *c < 0 {
			catch = "never"
		}
	}
	if m := p.Model; m != nil {
		model = fmt.Sprintf("%.1fs", m.CatchUpS)
	}
	cost := func(v float64, f string) string {
		if v <= 0 {
			return "-"
		}
		return fmt.Sprintf(f, v)
	}
	return []string{name, p.Name, fmt.Sprintf("%.0f-%.0fs", p.StartS, p.EndS),
		fmt.Sprintf("%.0f", p.OfferedPerS), fmt.Sprintf("%.0f", p.CompletedPerS), fmt.Sprint(p.BacklogStart), fmt.Sprint(p.BacklogPeak), fmt.Sprint(p.BacklogEnd),
		pct("e2e", "p50"), pct("e2e", "p99"), pct("queue_wait", "p99"), pct("schedule_lag", "p99"),
		fmt.Sprintf("%d/%d/%d", p.Jobs.Lost, p.Jobs.Duplicated, p.Jobs.StartedEarly),
		cost(p.CommandsPerJob, "%.2f"), cost(p.RedisCPUPerJobUs, "%.1fµs"), catch, model}
}

// PhaseNotes are what a run's phases say beyond the table: the fluid
// model, the share of capacity under overload, a degradation, a ramp's
// knee under slo, and a catch-up flagged against the model.
func PhaseNotes(name string, r summary.RunSummary) []string {
	var notes []string
	for _, p := range r.Phases {
		if m := p.Model; m != nil {
			notes = append(notes, fmt.Sprintf("%s %s: fluid model (capacity %.0f/s): backlog %.0f jobs, catch-up %.1fs", name, p.Name, m.CapacityPerS, m.BacklogJobs, m.CatchUpS))
		}
		if p.EvictedKeys > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: Redis evicted %d keys at maxmemory in the phase", name, p.Name, p.EvictedKeys))
		}
		if p.OfCapacity > 0 {
			notes = append(notes, fmt.Sprintf("%s %s: completed %.2f of the capacity under overload", name, p.Name, p.OfCapacity))
		}
		if p.Degraded != "" {
			notes = append(notes, fmt.Sprintf("%s %s: DEGRADED: %s", name, p.Name, p.Degraded))
		}
		if k := p.KneePerS; k != nil {
			knee := fmt.Sprintf("knee at %.0f jobs/s offered (the first second whose e2e p99 went over slo.e2e_p99 %s)", *k, r.Config.SLO.E2EP99)
			if *k < 0 {
				knee = fmt.Sprintf("no knee: e2e p99 held under slo.e2e_p99 %s to the ramp's end", r.Config.SLO.E2EP99)
			}
			notes = append(notes, fmt.Sprintf("%s %s: %s", name, p.Name, knee))
		}
		if p.ModelGap != "" {
			notes = append(notes, fmt.Sprintf("%s %s: FLAGGED: %s", name, p.Name, p.ModelGap))
		}
	}
	if src := r.Config.Producers.CapacitySource; src != "" && r.Config.Producers.Capacity > 0 {
		notes = append(notes, fmt.Sprintf("%s capacity %.0f jobs/s, %s", name, r.Config.Producers.Capacity, src))
	}
	return notes
}
