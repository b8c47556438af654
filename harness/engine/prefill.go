package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
)

const (
	// prefillBatch is the jobs per Enqueue call while prefilling (the
	// stores' largest batch).
	prefillBatch = 1000
	// prefillLoaders load in parallel: Redis, not one connection, should
	// bound the load.
	prefillLoaders = 4
	// prefillCallTimeout bounds one prefill Enqueue: set-up, unmeasured,
	// so not the 10 s of a run's calls (finishTimeout). A job system's
	// driver enqueues a batch one job at a time in its own language, the
	// four loaders' batches in turn: Celery's took over 10 s a batch in a
	// loaded make test, and the prefill failed.
	prefillCallTimeout = time.Minute
)

// prefill loads producers.prefill jobs before the run starts, in bulk. The
// due ones enter the ledger as acknowledged warm-up jobs (run and checked,
// never measured); the delayed ones get a RunAt an hour after the run's
// end and stay out of the ledger, so one that runs is reported unexpected.
func (e *engine) prefill(ctx context.Context) (*summary.PrefillResult, error) {
	p := e.cfg.Producers
	if p.Prefill == 0 {
		return nil, nil
	}
	start := time.Now()
	delayed := int64(float64(p.Prefill) * p.PrefillDelayed)
	farRunAt := start.Add(e.cfg.Warmup + e.cfg.Duration + e.cfg.Drain + time.Hour).Truncate(time.Millisecond)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, prefillLoaders)
	for l := range prefillLoaders {
		wg.Go(func() {
			errs[l] = e.prefillLoader(ctx, &next, int64(p.Prefill), delayed, farRunAt)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	took := time.Since(start)
	return &summary.PrefillResult{Jobs: int64(p.Prefill), Delayed: delayed, LoadS: took.Seconds(),
		JobsPS: float64(p.Prefill) / max(took.Seconds(), 1e-9)}, nil
}

// prefillLoader enqueues batches until next passes total: job i < delayed
// is delayed past the run.
func (e *engine) prefillLoader(ctx context.Context, next *atomic.Int64, total, delayed int64, farRunAt time.Time) error {
	jobs := make([]jobstore.NewJob, 0, prefillBatch)
	var planned []ledger.PlannedJob
	var ids []string
	for {
		first := next.Add(prefillBatch) - prefillBatch
		if first >= total || ctx.Err() != nil {
			return ctx.Err()
		}
		jobs, planned, ids = jobs[:0], planned[:0], ids[:0]
		now := time.Now()
		for i := first; i < min(first+prefillBatch, total); i++ {
			id := "f-" + strconv.FormatInt(i, 10)
			nj := jobstore.NewJob{ID: id, Name: "prefill", Payload: e.payload, MaxRetries: e.cfg.Producers.MaxRetries}
			if i < delayed {
				nj.RunAt = farRunAt
			} else {
				planned = append(planned, ledger.PlannedJob{ID: id, Intended: now})
				ids = append(ids, id)
			}
			jobs = append(jobs, nj)
		}
		e.led.Planned(planned, now)
		cctx, cancel := context.WithTimeout(context.Background(), prefillCallTimeout)
		err := e.store.Enqueue(cctx, jobs...)
		cancel()
		if err != nil {
			e.led.EnqueueFailed(ids)
			return fmt.Errorf("jobs %d..%d: %w", first, first+int64(len(jobs))-1, err)
		}
		e.led.Acked(ids)
	}
}
