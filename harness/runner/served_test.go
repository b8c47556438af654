package runner

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

// TestServedAsynq runs asynq without faults, in process and in worker
// processes (one Server each), where its own Server runs
// aebench's handler (jobstore.Serving): delayed jobs, handler failures
// retried and dead-lettered, and every job accounted for; the summary and
// the terminal say the run was served.
func TestServedAsynq(t *testing.T) {
	for _, tc := range []struct{ name, workers string }{
		{"in process", "count: 2"},
		{"worker processes", "count: 2, processes: 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(servedScenario, "WORKERS", tc.workers, 1)
			outcome, out := runScenarioText(t, "served.yaml", src)
			if len(outcome.Summary.Runs) != 1 {
				t.Fatalf("%d runs", len(outcome.Summary.Runs))
			}
			r := outcome.Summary.Runs[0]
			l, c := r.Ledger, r.Counters
			if r.Status != summary.StatusOK || !r.Served || l.Lost != 0 || l.Acknowledged == 0 || l.Completed+l.DeadLettered != l.Acknowledged {
				t.Errorf("status %s served %v: acknowledged %d completed %d dead %d lost %d; problems %v", r.Status, r.Served,
					l.Acknowledged, l.Completed, l.DeadLettered, l.Lost, r.Problems)
			}
			if c.Retried == 0 || c.DeadLettered == 0 {
				t.Errorf("retried %d, dead %d: want both (fail 0.1, max_retries 1)", c.Retried, c.DeadLettered)
			}
			if !strings.Contains(out, "served, as its users run it") {
				t.Errorf("the terminal does not say the run was served:\n%s", out)
			}
		})
	}
}

// servedScenario serves asynq with retries, dead letters and delayed jobs;
// WORKERS is the workers' count and processes.
const servedScenario = `
name: served-test
duration: 2s
warmup: 300ms
drain: 20s
calibration: off
backends:
  - name: asynq
    options: {task_check_interval: 10ms, delayed_task_check_interval: 100ms, shutdown_timeout: 100ms, concurrency: 4}
store: {backoff_base: 1ms, backoff_max: 1ms}
producers: {rate: 200, delayed: 0.1, delay: "uniform(50ms, 300ms)", max_retries: 1}
workers: {WORKERS, concurrency: 4, handler: "uniform(1ms, 3ms)", fail: 0.1}
`
