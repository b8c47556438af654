package output

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// phaseTable prints, for runs with a load profile (phases:), each phase of
// each run: what it offered and completed, the due backlog, the worst
// second's e2e p99 and producer lateness, and the catch-up after a surge.
func (t *terminal) phaseTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	var notes []string
	for _, r := range runs {
		for _, p := range r.Phases {
			if m := p.Model; m != nil {
				notes = append(notes, fmt.Sprintf("  %s %s: fluid model (capacity %.0f/s): backlog %.0f jobs, catch-up %.1fs", runName(r, t.s.Repeats), p.Name, m.CapacityPerS, m.BacklogJobs, m.CatchUpS))
			}
			if p.OfCapacity > 0 {
				notes = append(notes, fmt.Sprintf("  %s %s: completed %.2f of the capacity under overload", runName(r, t.s.Repeats), p.Name, p.OfCapacity))
			}
			if k := p.KneePerS; k != nil {
				knee := fmt.Sprintf("knee at %.0f jobs/s offered (the first second whose e2e p99 went over slo.e2e_p99 %s)", *k, r.Config.SLO.E2EP99)
				if *k < 0 {
					knee = fmt.Sprintf("no knee: e2e p99 held under slo.e2e_p99 %s to the ramp's end", r.Config.SLO.E2EP99)
				}
				notes = append(notes, fmt.Sprintf("  %s %s: %s", runName(r, t.s.Repeats), p.Name, knee))
			}
			if p.Degraded != "" {
				notes = append(notes, fmt.Sprintf("  %s %s: DEGRADED: %s", runName(r, t.s.Repeats), p.Name, p.Degraded))
			}
			if p.ModelGap != "" {
				notes = append(notes, fmt.Sprintf("  %s %s: FLAGGED: %s", runName(r, t.s.Repeats), p.Name, p.ModelGap))
			}
			rows = append(rows, phaseRow(runName(r, t.s.Repeats), p))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nphases (offered: the profile's mean rate; backlog: due jobs at the phase's start, peak and end; latencies over the phase's seconds, late: the producers' lateness against the profile; lost/dup/early: the jobs intended in the phase; Redis cost over its seconds; catch-up: after a surge, until the backlog is back within 10% of where it stood before it and the producers are back on their plan, beside the fluid model's):")
	_ = report.Table(w, []string{"backend", "phase", "from-to", "offered", "done/s", "backlog", "peak", "end", "e2e p50", "e2e p99", "qwait p99", "late p99",
		"lost/dup/early", "cmds/job", "cpu/job", "catch-up", "model"}, rows)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// phaseRow is one phase of one run in the phase table.
func phaseRow(name string, p summary.PhaseResult) []string {
	pct := func(tag, q string) string {
		if v, ok := p.LatencyNs[tag][q]; ok {
			return fmtNs(v)
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
		fmtRate(p.OfferedPerS), fmtRate(p.CompletedPerS), fmt.Sprint(p.BacklogStart), fmt.Sprint(p.BacklogPeak), fmt.Sprint(p.BacklogEnd),
		pct("e2e", "p50"), pct("e2e", "p99"), pct("queue_wait", "p99"), pct("schedule_lag", "p99"),
		fmt.Sprintf("%d/%d/%d", p.Jobs.Lost, p.Jobs.Duplicated, p.Jobs.StartedEarly),
		cost(p.CommandsPerJob, "%.2f"), cost(p.RedisCPUPerJobUs, "%.1fµs"), catch, model}
}
