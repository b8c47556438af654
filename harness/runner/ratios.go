package runner

import (
	"fmt"
	"io"
	"strings"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// The ratios put every backend of a cell beside the references measured in
// the same cell of the same plan, on the same machine under the same load:
// the floor (the least a job with a record costs on this Redis) and the
// asynq peer (what people run). Absolute numbers move with the machine and
// whatever else runs on it; ratios within one run move much less.

// isReference says a run is one the others are compared with: a reference
// (the floor) or a peer (asynq).
func isReference(r summary.RunSummary) bool {
	return r.Kind == string(registry.KindReference) || r.Kind == string(registry.KindPeer)
}

// refFigures are a reference's figures, averaged over its measured repeats.
type refFigures struct {
	label                 string
	throughput, cpu, cmds float64
}

// measured says a run has numbers to compare.
func measured(r summary.RunSummary) bool {
	return !r.Calibration && (r.Status == summary.StatusOK || r.Status == summary.StatusFailed)
}

// references returns the reference runs' figures in a cell, by label, in
// the plan's order.
func references(runs []summary.RunSummary, cell int) []refFigures {
	var out []refFigures
	idx := map[string]int{}
	n := map[string]float64{}
	for _, r := range runs {
		if r.Cell != cell || !isReference(r) || !measured(r) {
			continue
		}
		i, ok := idx[r.Label]
		if !ok {
			i = len(out)
			idx[r.Label] = i
			out = append(out, refFigures{label: r.Label})
		}
		f := &out[i]
		n[r.Label]++
		f.throughput += r.Throughput.Completed
		if r.Cost != nil {
			f.cpu += r.Cost.RedisCPUMicros
			f.cmds += r.Cost.Commands
		}
	}
	for i := range out {
		k := n[out[i].label]
		out[i].throughput, out[i].cpu, out[i].cmds = out[i].throughput/k, out[i].cpu/k, out[i].cmds/k
	}
	return out
}

// setRatios fills each measured run's Ratios against every reference of
// its cell (the reference itself included: 1, or its repeat's spread).
func setRatios(sum *summary.Summary) {
	refs := map[int][]refFigures{}
	for i := range sum.Runs {
		r := &sum.Runs[i]
		if !measured(*r) {
			continue
		}
		rf, ok := refs[r.Cell]
		if !ok {
			rf = references(sum.Runs, r.Cell)
			refs[r.Cell] = rf
		}
		for _, f := range rf {
			if r.Ratios == nil {
				r.Ratios = map[string]summary.Ratio{}
			}
			x := summary.Ratio{Against: f.label, Throughput: ratio(r.Throughput.Completed, f.throughput)}
			if r.Cost != nil {
				x.RedisCPUPerJob, x.CommandsPerJob = ratio(r.Cost.RedisCPUMicros, f.cpu), ratio(r.Cost.Commands, f.cmds)
			}
			r.Ratios[f.label] = x
		}
	}
}

func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

func fmtRatio(x float64) string {
	if x <= 0 {
		return "-"
	}
	if x < 10 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// referenceNotes prints, after a cell's tables: the ratio of each
// backend's throughput, Redis CPU per job and commands per job to each
// reference measured in the cell (column "x <reference>"), what the
// references do not guarantee, and the runs that were not applicable.
func (pr *planRunner) referenceNotes(w io.Writer, cell int, runs []summary.RunSummary) {
	refs := references(pr.sum.Runs, cell)
	if len(refs) > 0 && len(runs) > 0 {
		header := []string{"backend", "kind"}
		for _, f := range refs {
			x := " x " + f.label
			header = append(header, "done/s"+x, "cpu/job"+x, "cmds/job"+x)
		}
		var rows [][]string
		for _, r := range runs {
			row := []string{runName(r, pr.s.Repeats), r.Kind}
			for _, f := range refs {
				x := r.Ratios[f.label]
				row = append(row, fmtRatio(x.Throughput), fmtRatio(x.RedisCPUPerJob), fmtRatio(x.CommandsPerJob))
			}
			rows = append(rows, row)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "ratios to the references measured in this cell (same machine, same load; done/s above 1 is faster, cpu/job and cmds/job above 1 cost more):")
		_ = report.Table(w, header, rows)
	}
	seen := map[string]bool{}
	for _, r := range pr.sum.Runs {
		if r.Cell != cell {
			continue
		}
		if r.Status == summary.StatusNotApplicable {
			fmt.Fprintf(w, "%s: not applicable: %s\n", runName(r, pr.s.Repeats), r.NotApplicable)
		}
		if r.Limits != "" && !seen[r.Label] && !r.Calibration {
			seen[r.Label] = true
			fmt.Fprintf(w, "%s (%s%s%s) does not guarantee: %s\n", r.Label, r.Kind, notJobStore(r.Kind), pr.settings(r), r.Limits)
		}
	}
}

// notJobStore marks a reference in its limits line: it never enters the
// claims made about job stores.
func notJobStore(kind string) string {
	if kind == string(registry.KindReference) {
		return ", not a job store"
	}
	return ""
}

// settings lists a reference's backend options as the run used them
// (asynq's intervals dominate its latency, so they go with its numbers).
func (pr *planRunner) settings(r summary.RunSummary) string {
	be, err := pr.o.Registry.Lookup(r.Backend)
	if err != nil || len(be.Options) == 0 {
		return ""
	}
	var parts []string
	for _, o := range be.Options {
		v, ok := r.Config.Backend.Options[o.Name]
		if !ok {
			v = o.Default
		}
		parts = append(parts, o.Name+" "+v)
	}
	return "; " + strings.Join(parts, ", ")
}
