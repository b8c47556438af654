package analysis

import (
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// Gate checks the absolute thresholds over the statistics (medians of the
// repeats of every job store; the floor and the calibration never gate)
// and returns one result per threshold and the lines of those that failed:
// crossed, or unchecked because no job store measured the metric.
func Gate(ths []verdict.Threshold, sum *summary.Summary) ([]summary.ThresholdResult, []string) {
	if len(ths) == 0 || sum.Statistics == nil {
		return nil, nil
	}
	crossings := append(verdict.Evaluate(ths, sum.Statistics), verdict.EvaluatePhases(ths, sum.Runs)...)
	var results []summary.ThresholdResult
	var failed []string
	for _, t := range ths {
		r := summary.ThresholdResult{Threshold: t.Expr, Status: "passed"}
		if t.Relative {
			r.Status = "baseline"
			results = append(results, r)
			continue
		}
		for _, c := range crossings {
			if c.Threshold != t.Expr {
				continue
			}
			r.Status = "crossed"
			if c.Unchecked {
				r.Status = "unchecked"
			}
			r.Crossings = append(r.Crossings, c.Message)
			failed = append(failed, c.Message)
		}
		results = append(results, r)
	}
	return results, failed
}
