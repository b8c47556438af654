package verdict

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/aebench/aebench/report"
	"github.com/aebench/aebench/stats"
)

// Formats of WriteComparison.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Formats lists what WriteComparison writes.
func Formats() []string { return []string{FormatText, FormatJSON, FormatMarkdown} }

// WriteComparison writes c as text (for a terminal or a CI log), JSON (for
// machines) or Markdown (for a pull-request comment).
func WriteComparison(w io.Writer, c *Comparison, format string) error {
	switch format {
	case FormatText:
		return writeText(w, c)
	case FormatMarkdown:
		return writeMarkdown(w, c)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(jsonComparison(c))
	}
	return fmt.Errorf("unknown format %q; formats: %s", format, strings.Join(Formats(), ", "))
}

// RowHeader and RowCells are the one table layout of a comparison that
// text, Markdown and the report page share.
func RowHeader() []string {
	return []string{"metric", "base", "new", "delta", "delta 95% CI", "p", "verdict"}
}

// RowCells formats one row of a comparison for RowHeader's columns.
func RowCells(r Row) []string {
	m, _ := Lookup(r.Metric)
	val := func(s stats.Stat) string {
		if s.N == 0 {
			return "-"
		}
		v := m.Format(s.Median)
		if s.CI != nil {
			v += fmt.Sprintf(" [%s, %s]", m.Format(s.CI.Lo), m.Format(s.CI.Hi))
		}
		return fmt.Sprintf("%s n=%d", v, s.N)
	}
	name := r.Metric
	if r.Gated {
		name += " *"
	}
	verdict := r.Verdict
	if r.Note != "" {
		verdict += " (" + r.Note + ")"
	}
	p := "-"
	if r.Base.N > 0 && r.New.N > 0 {
		p = fmt.Sprintf("%.3f", r.P)
	}
	return []string{name, val(r.Base), val(r.New), fmtPct(r.DeltaPct), fmtCI(r.DeltaCI), p, verdict}
}

// Headline is the comparison's summary line: what the exit code means,
// and whether it rests on suspect runs.
func (c *Comparison) Headline() string {
	h := c.headline()
	if len(c.Suspect) > 0 && c.ExitCode() != ExitSuspect {
		h += fmt.Sprintf("; decided on %d suspect run(s), whose numbers the machine may have set (--strict-health exits %d instead): %s",
			len(c.Suspect), ExitSuspect, strings.Join(c.Suspect, "; "))
	}
	return h
}

func (c *Comparison) headline() string {
	switch code := c.ExitCode(); code {
	case ExitSuspect:
		return fmt.Sprintf("SUSPECT (exit %d, --strict-health): the comparison rests on runs the machine may have set; retry on a quieter machine: %s",
			code, strings.Join(c.Suspect, "; "))
	case ExitCorrectness:
		return fmt.Sprintf("FAILED (exit %d): runs of NEW failed their correctness checks: %s", code, strings.Join(c.Incorrect, "; "))
	case ExitUsage:
		return fmt.Sprintf("REFUSED (exit %d): %s", code, strings.Join(c.refusals(), "; "))
	case ExitThreshold:
		var ms []string
		for _, r := range c.Regressions {
			ms = append(ms, fmt.Sprintf("%s %s %s", groupName(r.Group), r.Metric, fmtPct(r.Value)))
		}
		return fmt.Sprintf("REGRESSION (exit %d): %s", code, strings.Join(ms, "; "))
	}
	ok := fmt.Sprintf("OK (exit 0): %d groups compared, no gated metric got worse", len(c.Pairs))
	if len(c.Loosened) > 0 {
		ok += " (gates LOOSENED by --loosen: " + strings.Join(c.Loosened, "; ") + ")"
	}
	if c.Forced {
		if why := c.refusals(); len(why) > 0 {
			// --force compared what a plain compare refuses: say so, and why.
			ok = fmt.Sprintf("OK, FORCED (exit 0; --force overrode: %s): %d groups compared, no gated metric got worse",
				strings.Join(why, "; "), len(c.Pairs))
		}
	}
	return ok
}

func (c *Comparison) refusals() []string {
	var out []string
	for _, r := range c.Refused {
		out = append(out, fmt.Sprintf("%s: conditions differ: %s", groupName(r.Key), strings.Join(r.Differences, ", ")))
	}
	for _, s := range c.Incomplete {
		out = append(out, "incomplete result "+s)
	}
	for _, k := range c.OnlyBase {
		out = append(out, groupName(k)+" is only in BASE")
	}
	for _, k := range c.OnlyNew {
		out = append(out, groupName(k)+" is only in NEW")
	}
	if len(c.Pairs) == 0 && len(out) == 0 {
		out = append(out, "no group (cell, backend, client) is in both sets")
	}
	if len(out) > 0 && !c.Forced && !c.hardRefusal() {
		out[len(out)-1] += " (--force compares anyway)"
	}
	return out
}

// GateText says what gates and at which significance.
func (c *Comparison) GateText() string {
	var gated []string
	limits := map[string]float64{}
	for _, p := range c.Pairs {
		for _, r := range p.Rows {
			if r.Gated {
				limits[r.Metric] = r.LimitPct
			}
		}
	}
	var counted []string
	for name, l := range limits {
		m, _ := Lookup(name)
		g := fmt.Sprintf("%s (%s%g%%)", name, worseSign(m), l)
		if m.Deterministic() {
			counted = append(counted, g)
		} else {
			gated = append(gated, g)
		}
	}
	sort.Strings(gated)
	sort.Strings(counted)
	switch {
	case len(gated) == 0 && c.Metered:
		gated = []string{"none gated (Redis under callgrind: its timings are valgrind's)"}
	case len(gated) == 0:
		gated = []string{"none gated (no timing metric was measured on both sides)"}
	}
	return fmt.Sprintf("gate (*): deterministic, counted per job and decided on the medians (they hold on a noisy shared runner): %s; "+
		"timing: %s, a regression is significant (Mann-Whitney U, %d tests sharing alpha %g: p < %.4g each) "+
		"and beyond its limit (on a shared runner expect these to say too noisy); other metrics: alpha %g, noise floor ±%g%%",
		strings.Join(counted, ", "), strings.Join(gated, ", "), c.GatedTests, c.Alpha, c.PerTestAlpha, c.Alpha, c.NoiseFloor*100)
}

func writeText(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "aebench compare\n  base %s\n  new  %s\n%s\n", c.Base, c.New, c.GateText())
	for _, p := range c.Pairs {
		fmt.Fprintf(w, "\n%s: %s\n", groupName(p.Key), p.Conditions)
		if len(p.Differences) > 0 {
			fmt.Fprintf(w, "  forced despite different conditions: %s\n", strings.Join(p.Differences, ", "))
		}
		rows := make([][]string, 0, len(p.Rows))
		for _, r := range p.Rows {
			rows = append(rows, RowCells(r))
		}
		if err := report.Table(w, RowHeader(), rows); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, r := range c.Regressions {
		fmt.Fprintln(w, r.Message)
	}
	_, err := fmt.Fprintln(w, c.Headline())
	return err
}

func writeMarkdown(w io.Writer, c *Comparison) error {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Fprintf(w, "### aebench compare: %s\n\n", esc(c.Headline()))
	fmt.Fprintf(w, "Base `%s`, new `%s`. %s.\n", c.Base, c.New, esc(c.GateText()))
	for _, p := range c.Pairs {
		fmt.Fprintf(w, "\n**%s**: %s\n\n", esc(groupName(p.Key)), esc(p.Conditions))
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(RowHeader(), " | "), strings.Repeat(" --- |", len(RowHeader())))
		for _, r := range p.Rows {
			cells := RowCells(r)
			for i := range cells {
				cells[i] = esc(cells[i])
			}
			if r.Verdict == Worse || r.Verdict == Better {
				cells[len(cells)-1] = "**" + cells[len(cells)-1] + "**"
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	if len(c.Regressions) > 0 {
		fmt.Fprintln(w)
		for _, r := range c.Regressions {
			fmt.Fprintf(w, "- %s\n", esc(r.Message))
		}
	}
	return nil
}

// jsonComparison is the JSON shape of a comparison.
func jsonComparison(c *Comparison) any {
	type pair struct {
		Group       stats.Key `json:"group"`
		Conditions  string    `json:"conditions"`
		Differences []string  `json:"forced_differences,omitempty"`
		Rows        []Row     `json:"metrics"`
	}
	out := struct {
		Base         string     `json:"base"`
		New          string     `json:"new"`
		ExitCode     int        `json:"exit_code"`
		Headline     string     `json:"headline"`
		Alpha        float64    `json:"alpha"`
		PerTestAlpha float64    `json:"per_test_alpha"`
		GatedTests   int        `json:"gated_tests"`
		NoiseFloor   float64    `json:"noise_floor"`
		Pairs        []pair     `json:"pairs"`
		Refused      []string   `json:"refused,omitempty"`
		Incorrect    []string   `json:"incorrect,omitempty"`
		Regressions  []Crossing `json:"regressions"`
	}{Base: c.Base, New: c.New, ExitCode: c.ExitCode(), Headline: c.Headline(), Alpha: c.Alpha,
		PerTestAlpha: c.PerTestAlpha, GatedTests: c.GatedTests, NoiseFloor: c.NoiseFloor,
		Refused: c.refusals(), Incorrect: c.Incorrect, Regressions: c.Regressions, Pairs: []pair{}}
	if out.Regressions == nil {
		out.Regressions = []Crossing{}
	}
	if len(c.Refused)+len(c.Incomplete)+len(c.OnlyBase)+len(c.OnlyNew) == 0 && len(c.Pairs) > 0 {
		out.Refused = nil
	}
	for _, p := range c.Pairs {
		out.Pairs = append(out.Pairs, pair{Group: p.Key, Conditions: p.Conditions, Differences: p.Differences, Rows: p.Rows})
	}
	return out
}

// Num is a number that may be infinite (a change from zero); JSON, which
// has no infinity, gets null for it.
type Num float64

// MarshalJSON writes null for an infinite or NaN value.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}
