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
// best strategy of the cell (the job store with the most jobs/s, counted
// up to the offered rate, ties within 1% going to the least Redis CPU per
// job: in an open loop every store that keeps up completes the offered
// rate, and one that fell behind completes more while it catches up). Peers (asynq, BullMQ,
// Sidekiq, RQ) are measured against both, as the strategies are. Absolute
// numbers move with the machine and whatever else runs on it; ratios
// within one run move much less.

// Keys of summary.RunSummary.Ratios.
const (
	refFloor = "floor"
	refBest  = "best strategy"
)

// refFigures are a reference's figures, averaged over its measured repeats.
// kept is throughput capped at the offered rate: in an open loop a store
// that fell behind completes more than the offered rate while it catches up,
// which is no merit.
type refFigures struct {
	key, label            string
	throughput, cpu, cmds float64
	kept                  float64
}

// measured says a run has numbers to compare.
func measured(r summary.RunSummary) bool {
	return !r.Calibration && (r.Status == summary.StatusOK || r.Status == summary.StatusFailed)
}

// averaged returns the measured runs of a cell of one kind, averaged per
// label, in the plan's order.
func averaged(runs []summary.RunSummary, cell int, kind registry.Kind) []refFigures {
	var out []refFigures
	idx := map[string]int{}
	n := map[string]float64{}
	for _, r := range runs {
		if r.Cell != cell || r.Kind != string(kind) || !measured(r) {
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
		done := r.Throughput.Completed
		f.throughput += done
		if o := r.Throughput.Offered; o > 0 {
			done = min(done, o)
		}
		f.kept += done
		if r.Cost != nil {
			f.cpu += r.Cost.RedisCPUMicros
			f.cmds += r.Cost.Commands
		}
	}
	for i := range out {
		k := n[out[i].label]
		out[i].throughput, out[i].cpu, out[i].cmds, out[i].kept = out[i].throughput/k, out[i].cpu/k, out[i].cmds/k, out[i].kept/k
	}
	return out
}

// references returns a cell's references: the floor, then the best
// strategy, each when the cell measured one.
func references(runs []summary.RunSummary, cell int) []refFigures {
	var out []refFigures
	for _, f := range averaged(runs, cell, registry.KindReference) {
		if f.label == refFloor {
			f.key = refFloor
			out = append(out, f)
		}
	}
	var best *refFigures
	stores := averaged(runs, cell, registry.KindJobStore)
	for i := range stores {
		s := &stores[i]
		if best == nil || s.kept > 1.01*best.kept ||
			s.kept >= best.kept/1.01 && s.cpu > 0 && (best.cpu == 0 || s.cpu < best.cpu) {
			best = s
		}
	}
	if best != nil {
		b := *best
		b.key = refBest
		out = append(out, b)
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
			r.Ratios[f.key] = x
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

// referenceNotes prints, after a cell's tables, every backend side by
// side: its headline figures and its ratios to the cell's references
// (column "x floor", "x best strategy"); then what the references and
// peers do not guarantee, and the runs that were not applicable.
func (pr *planRunner) referenceNotes(w io.Writer, cell int, runs []summary.RunSummary) {
	refs := references(pr.sum.Runs, cell)
	if len(runs) > 1 {
		pr.sideBySide(w, refs, runs)
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

// sideBySide is the cell's one table of every backend: jobs/s, e2e p50
// and p99, lateness p99, Redis CPU and commands per job, the ledger's lost
// and duplicated, and the ratios to the references.
func (pr *planRunner) sideBySide(w io.Writer, refs []refFigures, runs []summary.RunSummary) {
	header := []string{"backend", "kind", "done/s", "e2e p50", "e2e p99", "late p99", "redis µs/job", "cmds/job", "lost", "dup"}
	var names []string
	for _, f := range refs {
		// Short heads keep the table within 120 columns: "x best" is the
		// ratio to the best strategy, "cpu x best" its Redis CPU per job.
		short := strings.TrimSuffix(f.key, " strategy")
		header = append(header, "x "+short, "cpu x "+short)
		names = append(names, fmt.Sprintf("%s = %s", f.key, f.label))
	}
	var rows [][]string
	for _, r := range runs {
		lat := func(tag, q string) string {
			if m, ok := r.LatencyNs[tag]; ok {
				return latText(&r, m[q])
			}
			return "-"
		}
		cpu, cmds := "-", "-"
		if c := r.Cost; c != nil && c.Commands > 0 {
			cpu, cmds = fmt.Sprintf("%.1f", c.RedisCPUMicros), fmt.Sprintf("%.2f", c.Commands)
		}
		row := []string{runName(r, pr.s.Repeats), r.Kind, fmtRate(r.Throughput.Completed), lat("e2e", "p50"), lat("e2e", "p99"),
			lat("lateness", "p99"), cpu, cmds, fmt.Sprint(r.Ledger.Lost), fmt.Sprint(r.Ledger.DuplicatedExecutions)}
		for _, f := range refs {
			x := r.Ratios[f.key]
			row = append(row, fmtRatio(x.Throughput), fmtRatio(x.RedisCPUPerJob))
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w)
	note := ""
	if len(names) > 0 {
		note = "; " + strings.Join(names, ", ") + "; x: done/s, above 1 is faster; cpu x: Redis CPU per job, above 1 costs more"
	}
	fmt.Fprintf(w, "side by side (same Redis, same load, one ledger%s):\n", note)
	_ = report.Table(w, header, rows)
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
