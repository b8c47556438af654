package engine

import (
	"context"

	"github.com/aebench/aebench/harness/summary"
)

// CostMeter takes Redis's cost of a run; nil for the null backend.
type CostMeter interface {
	// Begin runs before any load (reset stats, start the memory sampler).
	Begin(ctx context.Context) error
	// Mark is the start of the cost window: the measured window's, or
	// right after Begin when Hooks.CostWholeRun.
	Mark(ctx context.Context) error
	// End is the end of the window; jobs (completed in the window) is the
	// divisor for per-job costs, acked (so far) the one for memory.
	End(ctx context.Context, jobs, acked int64) error
	// Finish stops sampling and returns the cost.
	Finish() *summary.CostReport
}

// markCost opens the cost window when wholeRun says which one this is:
// the whole run's (at its start) or the measured window's (at warm-up's
// end). Hooks.CostWholeRun picks one; the other call does nothing.
func (e *engine) markCost(ctx context.Context, wholeRun bool) error {
	if e.hooks.Cost == nil || e.hooks.CostWholeRun != wholeRun {
		return nil
	}
	return e.hooks.Cost.Mark(ctx)
}

// endCost closes the window markCost opened, dividing by jobs.
func (e *engine) endCost(ctx context.Context, wholeRun bool, jobs, acked int64) {
	if e.hooks.Cost == nil || e.hooks.CostWholeRun != wholeRun {
		return
	}
	if err := e.hooks.Cost.End(ctx, jobs, acked); err != nil {
		e.noteErr(err)
	}
}
