package runner

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
)

// printMatrix prints, for a plan of several cells, each backend's jobs/s
// and e2e p50 in each cell (medians over the repeats), so a dimension such
// as network.rtt reads across at a glance; nothing for one cell. Backends
// are the rows and cells the columns, or the other way round when there
// are more cells than backends, so the table stays narrow; columns are
// named "cell N" with a legend under the table.
func (pr *planRunner) printMatrix(w io.Writer) {
	if len(pr.s.Cells) < 2 {
		return
	}
	type key struct {
		label string
		cell  int
	}
	tp, e2e := map[key][]float64{}, map[key][]float64{}
	var labels []string
	seen := map[string]bool{}
	for _, r := range pr.sum.Runs {
		if r.Calibration || (r.Status != summary.StatusOK && r.Status != summary.StatusFailed) {
			continue
		}
		k := key{r.Label, r.Cell}
		tp[k] = append(tp[k], r.Throughput.Completed)
		if l, ok := r.LatencyNs["e2e"]; ok {
			e2e[k] = append(e2e[k], l["p50"])
		}
		if !seen[r.Label] {
			seen[r.Label] = true
			labels = append(labels, r.Label)
		}
	}
	text := func(l string, cell int) string {
		k := key{l, cell}
		if len(tp[k]) == 0 {
			return "-"
		}
		t := fmt.Sprintf("%.0f/s", median(tp[k]))
		if len(e2e[k]) > 0 {
			t += " " + fmtNs(median(e2e[k]))
		}
		return t
	}
	var cells []string
	for _, c := range pr.s.Cells {
		cells = append(cells, fmt.Sprintf("cell %d", c.Index))
	}
	rows, cols := labels, cells
	at := func(r, c int) string { return text(labels[r], pr.s.Cells[c].Index) }
	if len(cells) > len(labels) {
		rows, cols = cells, labels
		at = func(r, c int) string { return text(labels[c], pr.s.Cells[r].Index) }
	}
	fmt.Fprintf(w, "\n== %s across the matrix: jobs/s and e2e p50 (medians over the repeats) ==\n", pr.s.Name)
	fmt.Fprintf(w, "%-12s", "")
	for _, c := range cols {
		fmt.Fprintf(w, "  %-16s", c)
	}
	fmt.Fprintln(w)
	for r, name := range rows {
		fmt.Fprintf(w, "%-12s", name)
		for c := range cols {
			fmt.Fprintf(w, "  %-16s", at(r, c))
		}
		fmt.Fprintln(w)
	}
	for _, c := range pr.s.Cells {
		fmt.Fprintf(w, "cell %d: %s\n", c.Index, strings.Join(c.Vary, " "))
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
