package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/suggest"
)

// newSummary starts the summary of a plan of s: what is known before the first run.
func newSummary(s *scenario.Scenario, env summary.Environment, started time.Time) *summary.Summary {
	sum := &summary.Summary{SchemaVersion: summary.SchemaNoStatistics, Tool: "aebench", Environment: env, StartedAt: started.UTC(),
		Units: map[string]string{
			"latency_ns":       "nanoseconds",
			"throughput":       "jobs per second over the measured window (after warm-up, before the drain)",
			"cost.per_job":     "Redis INFO deltas over the measured window divided by cost.jobs (jobs completed in the window)",
			"cost.memory":      "bytes, INFO used_memory",
			"timeseries.csv":   "one row per sample of the collector, every real second: second is its end in the run's time base (simulated seconds on simulated time), and enqueued, completed, started, retried and dead are counts over the row's span_s seconds of that base (1 on real time, the speed on simulated time: divide by span_s for a rate); backlog = acknowledged jobs not finished and not in a handler, split into backlog_due and backlog_delayed (waiting for a RunAt after that second); e2e percentiles of the second, empty when it had no sample (e2e_samples 0)",
			"hlog":             "HdrHistogram interval log, values in ns, one tag per histogram",
			"hgrm":             "percentile distribution, values in ms",
			"recovery":         "fault -> next handler start of each job in flight at the fault, or its next claim when a later fault catches it before that start (faults.csv: one row per fault, at_s from the start of the measured window and run_at_s from the start of the run, as faults[].at counts); in the run's time base, like every latency",
			"time_base":        "a run on simulated time has time_base: which of its figures are simulated, which real (cost, harness), and which latencies real wake-up delay times the speed can account for (wake_bound)",
			"e2e":              "intended enqueue time (open loop: the plan) to Complete acknowledged, immediate jobs done on their first attempt",
			"lateness":         "handler start minus the RunAt asked for (delayed jobs, and retries after Fail)",
			"queue_wait":       "handler start minus when the attempt became due",
			"enqueue, claim..": "one store call each; claim counts calls that returned jobs, including any wait for work",
		},
		Scenario: summary.ScenarioInfo{Name: s.Name, File: s.File, Description: s.Description, Overrides: s.Overrides,
			Thresholds: thresholdExprs(s.Thresholds),
			Repeats:    s.Repeats, CalibrationNs: int64(s.Calibration), Source: string(s.Source), Warnings: s.Warnings}}
	for _, c := range s.Cells {
		sum.Scenario.Cells = append(sum.Scenario.Cells, summary.CellInfo{Index: c.Index, Vary: c.Vary})
	}
	return sum
}

func thresholdExprs(ths []scenario.Threshold) []string {
	var out []string
	for _, t := range ths {
		out = append(out, t.Expr)
	}
	return out
}

// parseThresholds parses the scenario's thresholds block before any run,
// so a malformed gate fails in a second with its file, line and field.
func parseThresholds(s *scenario.Scenario) ([]verdict.Threshold, error) {
	out := make([]verdict.Threshold, 0, len(s.Thresholds))
	for _, t := range s.Thresholds {
		th, err := verdict.ParseThreshold(t.Expr)
		if err != nil {
			return nil, t.Error(err.Error())
		}
		if th.Phase != "" {
			if err := phaseExists(s, th); err != nil {
				return nil, t.Error(err.Error())
			}
		}
		out = append(out, th)
	}
	return out, nil
}

// phaseExists checks that a phase-scoped threshold names a phase of the
// scenario's profile (every cell has the same phases), and that a limit
// in multiples of the capacity has one to multiply.
func phaseExists(s *scenario.Scenario, th verdict.Threshold) error {
	if len(s.Cells) == 0 {
		return nil
	}
	c := s.Cells[0].Base
	var names []string
	for _, p := range c.Phases {
		names = append(names, p.Name)
	}
	switch {
	case len(names) == 0:
		return fmt.Errorf("threshold %q is scoped to phase %s, and the scenario has no phases", th.Expr, th.Phase)
	case !slices.Contains(names, th.Phase):
		return fmt.Errorf("threshold %q: %q names no phase%s; phases: %s", th.Expr, th.Phase, suggest.DidYouMean(th.Phase, names), strings.Join(names, ", "))
	case th.OfCapacity && c.Producers.Capacity <= 0 && c.Producers.CapacityProbe <= 0:
		return fmt.Errorf("threshold %q: a limit in multiples of the capacity needs producers.capacity (jobs/s, or measure)", th.Expr)
	}
	return nil
}
