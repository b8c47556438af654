package runner

import (
	"fmt"
	"testing"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/driver/drivertest"
	"github.com/aebench/aebench/harness/summary"
)

// backlogJobs is the backlog each driver's run ends with: a read-back that
// asked about each id on its own, or paged a system's lists 50 at a time
// per chunk, timed out or took minutes at this size (BullMQ 10 s per 20k
// ids, Sidekiq 80 s, RQ 32 s); the bulk reads answer it in seconds.
const backlogJobs = 200_000

// backlogOf is a driver's backlog in this test. RQ and Celery enqueue far
// slower than they read back, and their prefill is what would cost CI:
// RQ's enqueue_many builds each job in Python (about 3,700 jobs/s here,
// 200k in 55 s), Celery's apply_async goes one job at a time and
// subscribes its client to each task's result channel
// (celery/backends/redis.py on_task_call: about 740 jobs/s). Their
// read-backs are held to 50k and 10k here; docs/results.md has RQ's 197k
// (3.3 s) and Sidekiq's and BullMQ's 1M (10.5-10.6 s).
func backlogOf(name string) int {
	switch name {
	case "rq":
		return 50_000
	case "celery":
		return 10_000
	}
	return backlogJobs
}

// TestDriverBacklogReadBack ends a run of each driver with a backlog of
// backlogJobs (prefilled through the driver, one worker too few to dent
// it, a drain far too short) and holds the read-back to placing every job:
// each is completed or still waiting where the system will reach it, none
// lost and none unreadable. How long the read-back took is logged, not
// asserted (speed belongs in scenarios); the run's summary carries it
// (ledger.read_back_ms).
func TestDriverBacklogReadBack(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, spec driver.Spec) {
		src := fmt.Sprintf(`
name: driver-backlog-%s
duration: 1s
warmup: 0s
drain: 1s
calibration: off
redis: {mode: embedded}
backends: [%s]
producers: {count: 1, rate: 50, prefill: %d}
workers: {count: 1, processes: 1, concurrency: 2, handler: 1ms}
`, spec.Name, spec.Name, backlogOf(spec.Name))
		outcome, out := runScenarioText(t, "driver-backlog.yaml", src)
		if len(outcome.Summary.Runs) != 1 {
			t.Fatalf("%d runs\n%s", len(outcome.Summary.Runs), out)
		}
		r := outcome.Summary.Runs[0]
		l := r.Ledger
		t.Logf("%s: read back %d open jobs in %.1fs (%d unfinished at drain, %d completed)",
			spec.Name, l.ReadBackJobs, l.ReadBackMS/1000, l.UnfinishedAtDrain, l.Completed)
		if r.Status != summary.StatusOK || l.Lost != 0 || l.Unreadable != 0 {
			t.Errorf("status %s (%s), lost %d, unreadable %d; problems %v\n%s", r.Status, r.Error, l.Lost, l.Unreadable, l.Problems, out)
		}
		if l.ReadBackJobs < int64(backlogOf(spec.Name)/2) || l.Completed+l.UnfinishedAtDrain != l.Acknowledged {
			t.Errorf("read back %d jobs; %d completed + %d unfinished of %d acknowledged\n%s",
				l.ReadBackJobs, l.Completed, l.UnfinishedAtDrain, l.Acknowledged, out)
		}
	})
}
