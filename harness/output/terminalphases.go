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
			if p.ModelGap != "" {
				notes = append(notes, fmt.Sprintf("  %s %s: FLAGGED: %s", runName(r, t.s.Repeats), p.Name, p.ModelGap))
			}
			catch := "-"
			if c := p.CatchUpS; c != nil {
				catch = fmt.Sprintf("%.1fs", *c)
				if *c < 0 {
					catch = "never"
				}
			}
			rows = append(rows, []string{runName(r, t.s.Repeats), p.Name, fmt.Sprintf("%.0f-%.0fs", p.StartS, p.EndS),
				fmtRate(p.OfferedPerS), fmtRate(p.CompletedPerS), fmt.Sprint(p.BacklogStart), fmt.Sprint(p.BacklogPeak), fmt.Sprint(p.BacklogEnd),
				fmtNs(p.E2EP99WorstMs * 1e6), fmtNs(p.ScheduleLagP99WorstMs * 1e6), catch})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nphases (offered: the profile's mean rate; backlog: due jobs at the phase's start, peak and end; worst second's e2e p99 and producer lateness p99; catch-up: after a surge, until the backlog is back within 10% of where it stood before it and the producers are back on their plan):")
	_ = report.Table(w, []string{"backend", "phase", "from-to", "offered", "done/s", "backlog", "peak", "end", "e2e p99 worst s", "late p99 worst s", "catch-up"}, rows)
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}
