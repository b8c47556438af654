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
// Every format of a plan's end is one: the plots, summary.json, the page
// and the terminal's tables (Format.Order puts them in that order). What
// the runner still prints itself: the run headers, the once-a-second
// status line and each run's verdict line, as the runs go.
package output

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
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

// Plan is what an output starts with: where the plan's files go, the
// scenario, the writers of the terminal (Stdout: the tables at the end;
// Progress: what a run prints as it goes, io.Discard with --quiet) and the
// registry (what a backend is: kind, options, driver).
type Plan struct {
	Dir      string
	Scenario *scenario.Scenario
	Stdout   io.Writer
	Progress io.Writer
	Registry *registry.Registry
}

// Output is one format. The runner calls Start once, then for each run
// Sample once a second (from the run's collector: it must not block) and
// RunDone when the run has ended, then PlanDone after the last run (in
// Format.Order), and Close last, whatever happened before.
type Output interface {
	Start(p Plan) error
	Sample(r Run, p engine.SeriesPoint)
	RunDone(rs *summary.RunSummary, res *engine.Result) error
	PlanDone(sum *summary.Summary) error
	Close() error
}

// RunRecorder is an Output that hears of every run the plan records, as
// it is recorded: those that ran (after RunDone), and those that did not
// (not applicable, or stopped by an error before the engine ran).
type RunRecorder interface {
	RunRecorded(rs *summary.RunSummary)
}

// Checkpointer is an Output that keeps the record of the plan as it stands
// (summary.json): the runner checkpoints it before the first run and after
// every run, so that what was measured outlives a later failure.
type Checkpointer interface {
	Checkpoint(sum *summary.Summary) error
}

// HistogramLogger is an Output that keeps a run's interval histograms:
// the runner asks it for the writer the engine's collector writes each
// second's histograms to, before the run starts (the .hlog output).
type HistogramLogger interface {
	HistogramLog(r Run, conditions string) (*hist.LogWriter, error)
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
	// Always: every run writes it; --output does not name it (the runner
	// may still turn one off: --no-plots).
	Always bool
	// Order is when PlanDone runs, lowest first, names breaking ties: a
	// later output may use what an earlier one made (summary.json is
	// written after the plots record a failure in it; the page renders
	// the summary in memory with the plots' SVGs; the terminal's tables
	// come last).
	Order int
}

// Builtin lists the formats by name: a new format is one line here.
func Builtin() map[string]Format {
	return map[string]Format{
		"timeseries":  {Doc: "timeseries.csv: every run's per-second counters, backlog and e2e percentiles", New: newTimeseries, Always: true},
		"faults":      {Doc: "faults.csv: one row per injected fault (runs with faults)", New: newFaultsCSV, Always: true},
		"hgrm":        {Doc: "<run>.<histogram>.hgrm: HdrHistogram percentile distributions", New: newHGRM, Always: true},
		"hlog":        {Doc: "<run>.hlog: HdrHistogram interval log, every histogram each second", New: newHLog, Always: true},
		"plots":       {Doc: "PNG and SVG plots: latency percentiles, throughput and backlog over time, sweeps", New: newPlots, Always: true, Order: 1},
		"summary":     {Doc: "summary.json: every run's figures, the statistics over repeats and the verdicts", New: newSummaryJSON, Always: true, Order: 2},
		"page":        {Doc: "report.html: the verdict, headline numbers, plots and statistics, rendered from the summary in memory", New: newPage, Always: true, Order: 3},
		"terminal":    {Doc: "the tables printed at the end of a plan: per cell, backends side by side", New: newTerminal, Always: true, Order: 4},
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

// Open builds the always-on outputs but those named in off, and those
// named (NAME or NAME=PARAM), in PlanDone's order (Format.Order); an
// unknown name is an error that lists the allowed ones.
func Open(named, off []string) ([]Output, error) {
	formats := Builtin()
	skip := map[string]bool{}
	for _, n := range off {
		skip[n] = true
	}
	var names []string
	for name, f := range formats {
		if f.Always && !skip[name] {
			names = append(names, name)
		}
	}
	seen := map[string]bool{}
	params := map[string]string{}
	for _, n := range named {
		name, param, _ := strings.Cut(n, "=")
		if f, ok := formats[name]; !ok || f.Always {
			return nil, fmt.Errorf("--output %q: allowed: %s", n, strings.Join(Optional(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("--output %s given twice", name)
		}
		seen[name], params[name] = true, param
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := formats[names[i]], formats[names[j]]
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return names[i] < names[j]
	})
	var outs []Output
	for _, name := range names {
		o, err := formats[name].New(params[name])
		if err != nil {
			return nil, fmt.Errorf("--output %s: %w", name, err)
		}
		outs = append(outs, o)
	}
	wirePlots(outs)
	return outs, nil
}

// wirePlots hands the plots output's drawings to the page, in memory.
func wirePlots(outs []Output) {
	var pl *plots
	for _, o := range outs {
		if p, ok := o.(*plots); ok {
			pl = p
		}
	}
	for _, o := range outs {
		if rp, ok := o.(*reportPage); ok && pl != nil {
			rp.plots = pl
		}
	}
}
