package engine

import (
	"context"
	"time"
)

// drain waits until every acknowledged job has finished, for up to
// cfg.Drain (less after Ctrl-C); it returns whether the run was interrupted.
func (e *engine) drain(ctx context.Context, res *Result, interrupted bool) bool {
	cfg := e.cfg
	drainStart := time.Now()
	limit := cfg.Drain
	if interrupted {
		limit = min(limit, interruptDrain)
	}
	deadline := drainStart.Add(limit)
	tick := time.NewTicker(5 * time.Millisecond)
	q := quiet{since: time.Now(), last: e.led.Outstanding(), busyOK: e.declaredLoss() != ""}
	for e.led.Outstanding() > 0 && time.Now().Before(deadline) {
		if q.still(e.led.Outstanding(), e.c.inFlight.Load()) {
			// Nothing in flight and the backlog still: jobs whose events
			// the ledger missed would hold the drain to its end. Read back
			// and settle what the store shows finished; end the drain
			// when what is left is out of every queue.
			if e.rb.Finished() {
				res.Window.Settled = true
				break
			}
			q = quiet{since: time.Now(), last: e.led.Outstanding(), busyOK: q.busyOK}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				deadline = minTime(deadline, time.Now().Add(interruptDrain))
			}
			// A done context keeps this case ready: fall back to the ticker.
			<-tick.C
		}
	}
	tick.Stop()
	res.Window.WarmupS = min(cfg.Warmup, time.Since(e.t0)).Seconds()
	res.Window.DrainS = time.Since(drainStart).Seconds()
	res.Window.Drained = e.led.Outstanding() == 0
	return interrupted
}

// quietFor is how long nothing may be in flight and the backlog still
// before the drain reads the open jobs back.
const quietFor = time.Second

// quiet tracks how long the drain has seen no job in flight and an
// unchanged count of open jobs. With busyOK (a system that declares
// losing jobs under this run's faults) jobs in flight do not count, only
// that neither count moved: a job its worker abandoned (RQ's after a Redis
// restart its worker process survived) stays in flight for the
// coordinator, and the read-back tells it from one still running.
type quiet struct {
	since          time.Time
	last, inFlight int64
	busyOK         bool
}

// still reports whether the drain has been quiet for quietFor.
func (q *quiet) still(outstanding, inFlight int64) bool {
	if outstanding != q.last || inFlight != q.inFlight || inFlight > 0 && !q.busyOK {
		q.since, q.last, q.inFlight = time.Now(), outstanding, inFlight
		return false
	}
	return time.Since(q.since) >= quietFor
}
