package output

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// mixTable prints each run's job mix: its kinds, its tenants' fairness
// and its retry storm (nothing for runs without jobs: or failure_windows:).
func (t *terminal) mixTable(w io.Writer, runs []summary.RunSummary) {
	var kinds, queues, tenants, storm [][]string
	var lines []string
	for _, r := range runs {
		if r.Mix == nil {
			continue
		}
		name := runName(r, t.s.Repeats)
		kinds = append(kinds, analysis.KindRows(name, r.Mix)...)
		queues = append(queues, analysis.QueueRows(name, r.Mix)...)
		if row, ok := analysis.TenantRow(name, r.Mix); ok {
			tenants = append(tenants, row)
		}
		rows, line := analysis.StormRows(name, r.Mix)
		storm = append(storm, rows...)
		if line != "" {
			lines = append(lines, line)
		}
	}
	if len(kinds)+len(queues)+len(tenants)+len(storm) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, analysis.MixNote)
	for _, tb := range []struct {
		head []string
		rows [][]string
	}{{analysis.KindHeader(), kinds}, {analysis.QueueHeader(), queues}, {analysis.TenantHeader(), tenants}, {analysis.StormHeader(), storm}} {
		if len(tb.rows) > 0 {
			_ = report.Table(w, tb.head, tb.rows)
		}
	}
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}
