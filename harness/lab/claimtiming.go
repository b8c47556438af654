package lab

import (
	"slices"

	"github.com/aebench/aebench/harness/summary"
)

// timingMetrics are the flaw metrics that are timings (a call's cost, a
// recovery's time), not counts of jobs: the load of a neighbour moves
// them, and one run is one draw. Their scenarios never run beside another
// (not in --quick's prefetch) and, outside --quick, run timingRepeats
// times; the row reads the median of its runs.
var timingMetrics = map[string]bool{"keys_us": true, "recover_p50_us": true, "recovery_late_ms": true}

// timingRepeats is how many runs a timing flaw row reads, at least.
const timingRepeats = 3

// timingFile says a flaw scenario has a timing row.
func timingFile(file string) bool {
	for _, fr := range flawRows {
		if fr.File == file && timingMetrics[fr.Metric] {
			return true
		}
	}
	return false
}

// runsMedian is the median of metric over runs (the lower middle of an
// even count), 0 for none.
func runsMedian(runs []*summary.RunSummary, metric func(*summary.RunSummary) int64) int64 {
	if len(runs) == 0 {
		return 0
	}
	vs := make([]int64, len(runs))
	for i, r := range runs {
		vs[i] = metric(r)
	}
	slices.Sort(vs)
	return vs[(len(vs)-1)/2]
}

// sumLedger is lost, duplicated and early jobs summed over runs.
func sumLedger(runs []*summary.RunSummary) (lost, dup, early int64) {
	for _, r := range runs {
		lost += r.Ledger.Lost
		dup += r.Ledger.DuplicatedExecutions
		early += r.Ledger.StartedEarly
	}
	return lost, dup, early
}
