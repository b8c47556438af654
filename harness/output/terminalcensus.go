package output

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// censusTable prints what each run's queue left in Redis after the drain
// (nothing for runs without a census).
func (t *terminal) censusTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	for _, r := range runs {
		if row, ok := analysis.CensusRow(runName(r, t.s.Repeats), r); ok {
			rows = append(rows, row)
		}
		if r.CensusError != "" {
			fmt.Fprintf(w, "note: %s: the key census failed: %s\n", runName(r, t.s.Repeats), r.CensusError)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, analysis.CensusNote)
	_ = report.Table(w, analysis.CensusHeader(), rows)
}

// driftTable prints each drift run's windows and verdicts.
func (t *terminal) driftTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	var lines []string
	for _, r := range runs {
		if r.Drift == nil {
			continue
		}
		rows = append(rows, analysis.DriftRows(runName(r, t.s.Repeats), r.Drift)...)
		lines = append(lines, analysis.DriftLines(runName(r, t.s.Repeats), r.Drift)...)
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, analysis.DriftNote)
	_ = report.Table(w, analysis.DriftHeader(), rows)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}
