// Package output holds the formats a run plan's results go out in, behind
// one interface, as k6's output package does: each format is one Output in
// a file of its own, and Builtin lists them, a line each. The runner starts
// them, feeds them a sample a second while a run runs, each finished run,
// then the finished plan, and closes them; it formats nothing itself for
// them.
//
// A new format is one new file (its Output and constructor) plus its line
// in Builtin. `aebench run --output NAME` turns on an optional one
// (jsonl; openmetrics=ADDR, which --metrics-addr ADDR spells); the files every run writes (timeseries.csv, faults.csv, the
// .hgrm files) are outputs that are always on.
//
// Still in the runner (issue 25 leaves them for a later step): the
// terminal tables, summary.json and the plots.
package output

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// Run names the run a Sample belongs to.
type Run struct {
	ID, Backend, Label, Client string
	Cell, Repeat               int
	Calibration                bool
}

// RunOf is the Run a run summary describes.
func RunOf(rs *summary.RunSummary) Run {
	return Run{ID: rs.ID, Backend: rs.Backend, Label: rs.Label, Client: rs.Client, Cell: rs.Cell, Repeat: rs.Repeat, Calibration: rs.Calibration}
}

// Output is one format. The runner calls Start once, then for each run
// Sample once a second (from the run's collector: it must not block) and
// RunDone when the run has ended, then PlanDone after the last run, and
// Close last, whatever happened before.
type Output interface {
	Start(dir string, s *scenario.Scenario) error
	Sample(r Run, p engine.SeriesPoint)
	RunDone(rs *summary.RunSummary, res *engine.Result) error
	PlanDone(sum *summary.Summary) error
	Close() error
}

// HistogramUser is an Output that uses SeriesPoint's latency buckets
// (E2EHist, ClaimHist): the collector fills them only when one asks, since
// walking the histograms each second costs it time.
type HistogramUser interface {
	UsesHistograms() bool
}

// UseHistograms says whether any of outs uses the latency buckets.
func UseHistograms(outs []Output) bool {
	for _, o := range outs {
		if h, ok := o.(HistogramUser); ok && h.UsesHistograms() {
			return true
		}
	}
	return false
}

// Factory builds an output from its parameter (the text after "=" in
// --output NAME=PARAM; "" without).
type Factory func(param string) (Output, error)

// Format is one entry of Builtin.
type Format struct {
	Doc string
	New Factory
	// Always: every run writes it; --output does not name it.
	Always bool
}

// Builtin lists the formats by name: a new format is one line here.
func Builtin() map[string]Format {
	return map[string]Format{
		"timeseries":  {Doc: "timeseries.csv: every run's per-second counters, backlog and e2e percentiles", New: newTimeseries, Always: true},
		"faults":      {Doc: "faults.csv: one row per injected fault (runs with faults)", New: newFaultsCSV, Always: true},
		"hgrm":        {Doc: "<run>.<histogram>.hgrm: HdrHistogram percentile distributions", New: newHGRM, Always: true},
		"page":        {Doc: "report.html: the verdict, headline numbers, plots and statistics, from summary.json", New: newPage, Always: true},
		"jsonl":       {Doc: "samples.jsonl: one JSON object per run and second, as the run goes (k6's --out json habit)", New: newJSONL},
		"openmetrics": {Doc: "a live OpenMetrics endpoint at http://ADDR/metrics (--metrics-addr ADDR, loopback only)", New: newOpenMetrics},
	}
}

// Optional names the formats --output may turn on.
func Optional() []string {
	var out []string
	for name, f := range Builtin() {
		if !f.Always {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Open builds the always-on outputs and those named (NAME or NAME=PARAM);
// an unknown name is an error that lists the allowed ones.
func Open(named []string) ([]Output, error) {
	formats := Builtin()
	var names []string
	for name, f := range formats {
		if f.Always {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var outs []Output
	build := func(name, param string) error {
		o, err := formats[name].New(param)
		if err != nil {
			return fmt.Errorf("--output %s: %w", name, err)
		}
		outs = append(outs, o)
		return nil
	}
	for _, name := range names {
		if err := build(name, ""); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, n := range named {
		name, param, _ := strings.Cut(n, "=")
		if f, ok := formats[name]; !ok || f.Always {
			return nil, fmt.Errorf("--output %q: allowed: %s", n, strings.Join(Optional(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("--output %s given twice", name)
		}
		seen[name] = true
		if err := build(name, param); err != nil {
			return nil, err
		}
	}
	return outs, nil
}
