package verdict

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/aebench/aebench/stats"
)

// Export formats (aebench export --format): benchstat's Go benchmark text
// (WriteBenchstat), and the statistics block's medians for the tools CI
// keeps benchmark history in.
const (
	ExportBenchstat = "benchstat"
	// ExportBMF is Bencher Metric Format JSON: {benchmark: {measure:
	// {value, lower_value, upper_value}}} (bencher.dev/docs/reference/bencher-metric-format).
	ExportBMF = "bmf"
	// ExportGAB is github-action-benchmark's custom JSON: an array of
	// {name, unit, value, range, extra}, one direction per file
	// (customSmallerIsBetter or customBiggerIsBetter: ExportOptions.Better).
	ExportGAB      = "github-action-benchmark"
	ExportCSV      = "csv"
	ExportMarkdown = "markdown"
)

// ExportFormats lists the formats, for help and errors.
func ExportFormats() []string {
	return []string{ExportBenchstat, ExportBMF, ExportGAB, ExportCSV, ExportMarkdown}
}

// ErrNothingToExport: the set has no measured run of a job store, peer or
// reference (an export would be empty).
var ErrNothingToExport = errors.New("no measured run to export")

// ExportOptions choose what an export writes.
type ExportOptions struct {
	// Better picks github-action-benchmark's direction: "lower" (its
	// customSmallerIsBetter, the default) or "higher" (customBiggerIsBetter).
	Better string
}

// exported is one group's metric, as every format but benchstat writes it.
type exported struct {
	Bench  string // <scenario>/cell=N/backend=B/client=C
	Metric Metric
	Stat   stats.Stat
}

// Export writes the set in format.
func Export(w io.Writer, s *Set, format string, o ExportOptions) error {
	if format == ExportBenchstat {
		return WriteBenchstat(w, s)
	}
	rows := exportRows(s)
	if len(rows) == 0 {
		return ErrNothingToExport
	}
	switch format {
	case ExportBMF:
		return writeBMF(w, rows)
	case ExportGAB:
		return writeGAB(w, rows, o.Better)
	case ExportCSV:
		return writeCSVRows(w, rows)
	case ExportMarkdown:
		return writeMarkdownRows(w, rows)
	}
	return fmt.Errorf("--format %q: allowed: %s", format, strings.Join(ExportFormats(), ", "))
}

// exportRows are the statistics block's medians, group by group in the
// catalog's order (the calibration is not in the block).
func exportRows(s *Set) []exported {
	blk := s.Stats
	if blk == nil {
		blk = Aggregate(s)
	}
	var out []exported
	for _, g := range blk.Groups {
		bench := fmt.Sprintf("%s/cell=%d/backend=%s/client=%s", s.Scenario, g.Cell, nameSafe(g.Backend), nameSafe(g.Client))
		for _, m := range catalog {
			if st, ok := g.Metric(m.Name); ok && st.N > 0 {
				out = append(out, exported{Bench: bench, Metric: m, Stat: st})
			}
		}
	}
	return out
}

// slug is a measure name Bencher accepts: lower-case letters, digits, '-'.
func slug(name string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(strings.ToLower(name))
}

func writeBMF(w io.Writer, rows []exported) error {
	type measure struct {
		Value float64  `json:"value"`
		Lower *float64 `json:"lower_value,omitempty"`
		Upper *float64 `json:"upper_value,omitempty"`
	}
	out := map[string]map[string]measure{}
	for _, r := range rows {
		m := measure{Value: r.Stat.Median}
		if ci := r.Stat.CI; ci != nil {
			m.Lower, m.Upper = &ci.Lo, &ci.Hi
		}
		if out[r.Bench] == nil {
			out[r.Bench] = map[string]measure{}
		}
		out[r.Bench][slug(r.Metric.Name)] = m
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeGAB(w io.Writer, rows []exported, better string) error {
	want := LowerIsBetter
	switch better {
	case "", "lower":
	case "higher":
		want = HigherIsBetter
	default:
		return fmt.Errorf("--better %q: allowed: lower, higher", better)
	}
	type entry struct {
		Name  string  `json:"name"`
		Unit  string  `json:"unit"`
		Value float64 `json:"value"`
		Range string  `json:"range,omitempty"`
		Extra string  `json:"extra,omitempty"`
	}
	out := []entry{}
	for _, r := range rows {
		if r.Metric.Better != want {
			continue
		}
		e := entry{Name: r.Bench + " " + r.Metric.Name, Unit: r.Metric.Unit, Value: r.Stat.Median,
			Extra: fmt.Sprintf("median of %d repeats", r.Stat.N)}
		if ci := r.Stat.CI; ci != nil {
			e.Range = fmt.Sprintf("%g..%g (95%% CI)", ci.Lo, ci.Hi)
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeCSVRows(w io.Writer, rows []exported) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"benchmark", "metric", "unit", "better", "n", "median", "ci95_lo", "ci95_hi"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		lo, hi := "", ""
		if ci := r.Stat.CI; ci != nil {
			lo, hi = f(ci.Lo), f(ci.Hi)
		}
		_ = cw.Write([]string{r.Bench, r.Metric.Name, r.Metric.Unit, r.Metric.Better.String(), strconv.Itoa(r.Stat.N), f(r.Stat.Median), lo, hi})
	}
	cw.Flush()
	return cw.Error()
}

func writeMarkdownRows(w io.Writer, rows []exported) error {
	by := map[string][]exported{}
	var benches []string
	for _, r := range rows {
		if by[r.Bench] == nil {
			benches = append(benches, r.Bench)
		}
		by[r.Bench] = append(by[r.Bench], r)
	}
	sort.Strings(benches)
	for _, b := range benches {
		fmt.Fprintf(w, "### %s\n\n| metric | median | 95%% CI | repeats |\n| --- | --- | --- | --- |\n", b)
		for _, r := range by[b] {
			ci := "-"
			if c := r.Stat.CI; c != nil {
				ci = r.Metric.Format(c.Lo) + " .. " + r.Metric.Format(c.Hi)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d |\n", r.Metric.Name, r.Metric.Format(r.Stat.Median), ci, r.Stat.N)
		}
		fmt.Fprintln(w)
	}
	return nil
}
