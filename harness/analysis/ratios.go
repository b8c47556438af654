package analysis

import (
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
)

// refFigures are a reference's figures, averaged over its measured repeats.
// kept is throughput capped at the offered rate: in an open loop a store
// that fell behind completes more than the offered rate while it catches up,
// which is no merit.
type RefFigures struct {
	Key, Label            string
	throughput, cpu, cmds float64
	kept                  float64
	wait50, wait99        float64 // queue-wait p50 and p99, ns
	// Repeats is how many measured runs the figures average.
	Repeats int
}

// queueWait returns a run's queue-wait p50 and p99 in ns (0 when absent).
func queueWait(r summary.RunSummary) (float64, float64) {
	m := r.LatencyNs["queue_wait"]
	return m["p50"], m["p99"]
}

// measured says a run has numbers to compare.
func Measured(r summary.RunSummary) bool {
	return !r.Calibration && (r.Status == summary.StatusOK || r.Status == summary.StatusFailed)
}

// averaged returns the measured runs of a cell of one kind, averaged per
// label, in the plan's order.
func Averaged(runs []summary.RunSummary, cell int, kind jobstore.Kind) []RefFigures {
	var out []RefFigures
	idx := map[string]int{}
	n := map[string]float64{}
	for _, r := range runs {
		if r.Cell != cell || r.Kind != string(kind) || !Measured(r) {
			continue
		}
		i, ok := idx[r.Label]
		if !ok {
			i = len(out)
			idx[r.Label] = i
			out = append(out, RefFigures{Label: r.Label})
		}
		f := &out[i]
		n[r.Label]++
		f.throughput += r.Throughput.Completed
		f.kept += Kept(r.Throughput)
		if r.Cost != nil {
			f.cpu += r.Cost.RedisCPUMicros
			f.cmds += r.Cost.Commands
		}
		w50, w99 := queueWait(r)
		f.wait50 += w50
		f.wait99 += w99
	}
	for i := range out {
		k := n[out[i].Label]
		out[i].throughput, out[i].cpu, out[i].cmds, out[i].kept = out[i].throughput/k, out[i].cpu/k, out[i].cmds/k, out[i].kept/k
		out[i].wait50, out[i].wait99, out[i].Repeats = out[i].wait50/k, out[i].wait99/k, int(k)
	}
	return out
}

// references returns a cell's references: the floor, then the best
// strategy, each when the cell measured one.
func References(runs []summary.RunSummary, cell int) []RefFigures {
	var out []RefFigures
	for _, f := range Averaged(runs, cell, jobstore.KindReference) {
		if f.Label == RefFloor {
			f.Key = RefFloor
			out = append(out, f)
		}
	}
	var best *RefFigures
	stores := Averaged(runs, cell, jobstore.KindJobStore)
	for i := range stores {
		s := &stores[i]
		if best == nil || s.kept > 1.01*best.kept ||
			s.kept >= best.kept/1.01 && s.cpu > 0 && (best.cpu == 0 || s.cpu < best.cpu) {
			best = s
		}
	}
	if best != nil {
		b := *best
		b.Key = RefBest
		out = append(out, b)
	}
	return out
}

// setRatios fills each measured run's Ratios against every reference of
// its cell (the reference itself included: 1, or its repeat's spread).
func SetRatios(sum *summary.Summary) {
	refs := map[int][]RefFigures{}
	for i := range sum.Runs {
		r := &sum.Runs[i]
		if !Measured(*r) {
			continue
		}
		rf, ok := refs[r.Cell]
		if !ok {
			rf = References(sum.Runs, r.Cell)
			refs[r.Cell] = rf
		}
		for _, f := range rf {
			if r.Ratios == nil {
				r.Ratios = map[string]summary.Ratio{}
			}
			// Completions beyond the offered rate are a store catching up,
			// no merit: both sides count up to it (closed loop: all).
			x := summary.Ratio{Against: f.Label, Throughput: Ratio(Kept(r.Throughput), f.kept)}
			if r.Cost != nil {
				x.RedisCPUPerJob, x.CommandsPerJob = Ratio(r.Cost.RedisCPUMicros, f.cpu), Ratio(r.Cost.Commands, f.cmds)
			}
			w50, w99 := queueWait(*r)
			x.QueueWaitP50, x.QueueWaitP99 = Ratio(w50, f.wait50), Ratio(w99, f.wait99)
			r.Ratios[f.Key] = x
		}
	}
}

// Kept is a run's jobs/s counted up to the offered rate (in an open loop;
// closed, all of them): a store that fell behind completes more than the
// offered rate while it catches up, which no ratio may call faster.
func Kept(t summary.Throughput) float64 {
	if t.Offered > 0 {
		return min(t.Completed, t.Offered)
	}
	return t.Completed
}

func Ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	return a / b
}

// Keys of summary.RunSummary.Ratios.
const (
	RefFloor = "floor"
	RefBest  = "best strategy"
)
