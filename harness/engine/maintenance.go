package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// startMaintenance runs what the contract expects a deployment to run: a
// recoverer, and a mover when the store is a jobstore.Mover whose due jobs
// wait for one.
func (e *engine) startMaintenance(ctx context.Context, wg *sync.WaitGroup) {
	wc := e.cfg.Workers
	var recLoop, movLoop *LoopCrash
	if e.ft != nil {
		recLoop, movLoop = e.ft.recLoop, e.ft.movLoop
	}
	rstore := e.store
	if recLoop != nil {
		rstore = recLoop.store
	}
	e.maintain(ctx, wg, maintLoop{name: "recoverer", tag: hist.TagRecover, every: wc.RecoveryInterval, batch: wc.RecoveryBatch,
		crash: recLoop, calls: &e.c.recoverCalls, errs: &e.c.recoverErrors, oom: &e.c.oomRecovers,
		call: func(ctx context.Context, t0 time.Time) (int, error) {
			if e.hooks.NoRecoverer {
				return 0, nil // a store that keeps no leases has nothing to take back
			}
			r, err := rstore.Recover(ctx, wc.RecoveryBatch)
			if err == nil && r.Len() > 0 {
				e.led.Recovered(r, t0)
				e.c.recovered.Add(int64(len(r.Requeued)))
				e.c.rdead.Add(int64(len(r.DeadLettered)))
				e.c.returned.Add(int64(len(r.Returned)))
			}
			return r.Len(), err
		}})
	if wc.MonitorInterval > 0 {
		e.maintain(ctx, wg, maintLoop{name: "monitor", tag: hist.TagStats, every: wc.MonitorInterval, batch: 1,
			calls: &e.c.statsCalls, errs: &e.c.statsErrors,
			call: func(ctx context.Context, _ time.Time) (int, error) {
				_, err := e.store.Stats(ctx)
				return 0, err // one call a tick
			}})
	}
	mover, ok := e.store.(jobstore.Mover)
	if !ok || !e.hooks.Mover {
		return
	}
	if movLoop != nil {
		mover = movLoop.store.(jobstore.Mover)
	}
	e.maintain(ctx, wg, maintLoop{name: "mover", tag: hist.TagPromote, every: wc.MoverInterval, batch: wc.MoverBatch,
		crash: movLoop, calls: &e.c.promoteCalls, errs: &e.c.promoteErrors,
		call: func(ctx context.Context, _ time.Time) (int, error) {
			n, err := mover.Promote(ctx, wc.MoverBatch)
			e.c.promoted.Add(int64(n))
			return n, err
		}})
}

// maintLoop is one maintenance loop: every tick it calls call until a call
// handles fewer than batch jobs, fails, or the run ends.
type maintLoop struct {
	name        string
	tag         hist.Tag
	every       time.Duration
	batch       int
	crash       *LoopCrash // nil unless a crash of this loop is scheduled
	calls, errs *atomic.Int64
	oom         *atomic.Int64 // refusals at maxmemory; nil: not counted
	call        func(ctx context.Context, t0 time.Time) (int, error)
}

func (e *engine) maintain(ctx context.Context, wg *sync.WaitGroup, l maintLoop) {
	rec := e.newRecorder()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(l.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for ctx.Err() == nil {
				l.crash.begin()
				t0 := time.Now()
				n, err := l.call(ctx, t0)
				t1 := time.Now()
				l.calls.Add(1)
				if e.measuring(t0) {
					rec.Record(l.tag, t1.Sub(t0))
				}
				if err != nil {
					if !l.crash.crashed(ctx, e, err, l.name) && ctx.Err() == nil {
						l.errs.Add(1)
						if l.oom != nil && rclient.IsOOM(err) {
							l.oom.Add(1)
						}
						e.noteErr(err)
					}
					break
				}
				if n < l.batch {
					break
				}
			}
		}
	}()
}
