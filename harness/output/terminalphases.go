package output

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// phaseTable prints, for runs with a load profile (phases:), each phase of
// each run (analysis.PhaseRow) and what the phases say beyond the table.
func (t *terminal) phaseTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	var notes []string
	for _, r := range runs {
		name := runName(r, t.s.Repeats)
		for _, p := range r.Phases {
			rows = append(rows, analysis.PhaseRow(name, p))
		}
		if len(r.Phases) > 0 {
			notes = append(notes, analysis.PhaseNotes(name, r)...)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nphases (offered: the profile's mean rate; backlog: due jobs at the phase's start, peak and end; latencies over the phase's seconds, late: the producers' lateness against the profile; lost/dup/early: the jobs intended in the phase; Redis cost over its seconds; catch-up: after a surge, until the backlog is back within 10% of where it stood before it and the producers are back on their plan, beside the fluid model's):")
	_ = report.Table(w, analysis.PhaseHeader(), rows)
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
}
