package runner

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
)

// printMatrix prints, for a plan of several cells, one line per backend
// with its jobs/s and e2e p50 in each cell (medians over the repeats), so
// a dimension such as network.rtt reads across at a glance; nothing for
// one cell.
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
	fmt.Fprintf(w, "\n== %s across the matrix: jobs/s, e2e p50 (medians over the repeats) ==\n", pr.s.Name)
	// Short column heads keep the table within 120 columns; long ones
	// become "cell N" with a legend under the table.
	heads, long := make([]string, len(pr.s.Cells)), false
	for i, c := range pr.s.Cells {
		heads[i] = strings.Join(c.Vary, " ")
		long = long || len(heads[i]) > 22
	}
	fmt.Fprintf(w, "%-12s", "backend")
	for i, c := range pr.s.Cells {
		h := heads[i]
		if long {
			h = fmt.Sprintf("cell %d", c.Index)
		}
		fmt.Fprintf(w, "  %-22s", h)
	}
	fmt.Fprintln(w)
	if long {
		defer func() {
			for i, c := range pr.s.Cells {
				fmt.Fprintf(w, "cell %d: %s\n", c.Index, heads[i])
			}
		}()
	}
	for _, l := range labels {
		fmt.Fprintf(w, "%-12s", l)
		for _, c := range pr.s.Cells {
			k := key{l, c.Index}
			cell := "-"
			if len(tp[k]) > 0 {
				cell = fmt.Sprintf("%.0f/s", median(tp[k]))
				if len(e2e[k]) > 0 {
					cell += ", " + fmtNs(median(e2e[k]))
				}
			}
			fmt.Fprintf(w, "  %-22s", cell)
		}
		fmt.Fprintln(w)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
