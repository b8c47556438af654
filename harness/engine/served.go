package engine

// This file runs a jobstore.Serving store (asynq): its own worker loop
// calls the engine's handler on the goroutine that dequeued the job, as
// the system's users run it, instead of aebench's Claim loop. It applies to
// runs without faults (crash points live in aebench's worker loop) whose
// workers are all in process, or all in worker processes: then each
// process serves (ServeWorker, told by ProcessConfig.Serve) and sends its
// events as a Claim loop's. The scenario's workers.concurrency,
// claim_batch and ack_batch do not apply, nor workers.count in process:
// the store's own settings (asynq's concurrency option) set how many jobs
// one Serve runs at once, and it claims and acknowledges one job at a time
// as its users' handlers do. Each job is booked as in runJob: started,
// queue wait, handler, Complete or Fail and their outcome in the ledger.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/jobstore"
)

// servingStore is the store's Serving side when this run serves it: no
// faults, no worker processes, no remote workers.
func (e *engine) servingStore() (jobstore.Serving, bool) {
	sv, ok := e.wstore.(jobstore.Serving)
	if !ok || e.hooks.Faults != nil || e.hooks.Procs != nil || e.cfg.Workers.InProcess() != e.cfg.Workers.Count {
		return nil, false
	}
	return sv, true
}

// servedWorkers is the Workers group of a served run: one Serve call.
type servedWorkers struct {
	e  *engine
	wg *sync.WaitGroup
	sv jobstore.Serving
}

// servesProcesses says whether this run's worker processes serve: the
// store serves, the run has no faults, and every worker is a process.
func (e *engine) servesProcesses() bool {
	_, ok := e.wstore.(jobstore.Serving)
	wc := e.cfg.Workers
	return ok && e.hooks.Faults == nil && e.hooks.Procs != nil && wc.Count > 0 && wc.InProcess() == 0
}

func (s *servedWorkers) Start(ctx context.Context) error {
	w := &worker{id: "served", rec: s.e.newRecorder(), stop: s.e.hardStop, ctx: ctx, quit: func() {}}
	s.e.serve(ctx, s.wg, s.sv, w)
	return nil
}

// serve runs sv's loop for worker w in a goroutine of wg until ctx ends.
func (e *engine) serve(ctx context.Context, wg *sync.WaitGroup, sv jobstore.Serving, w *worker) {
	sleepers := newSleeperPool(w.stop)
	wg.Go(func() {
		defer sleepers.close()
		err := sv.Serve(ctx, func(hctx context.Context, c jobstore.Claimed, end jobstore.Ender) {
			e.serveJob(hctx, w, sleepers, c, end)
		})
		if err != nil {
			e.noteErr(err)
		}
	})
}

// sleeperPool lends the served handlers a Sleeper each. The store's loop
// runs them on goroutines of its own, so no handler has a Sleeper for
// good, and a new one per job would be a timerfd made, registered and
// closed per job (Linux). It keeps up to sleeperPoolSize spare ones open;
// a handler still running when the pool closes closes its own.
type sleeperPool struct {
	stop   <-chan struct{}
	mu     sync.Mutex
	free   []*clock.Sleeper
	closed bool
}

const sleeperPoolSize = 256

func newSleeperPool(stop <-chan struct{}) *sleeperPool { return &sleeperPool{stop: stop} }

func (p *sleeperPool) get() *clock.Sleeper {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s
	}
	p.mu.Unlock()
	return clock.NewSleeper(p.stop)
}

func (p *sleeperPool) put(s *clock.Sleeper) {
	p.mu.Lock()
	if !p.closed && len(p.free) < sleeperPoolSize {
		p.free = append(p.free, s)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	_ = s.Close()
}

// close closes the spare Sleepers, and those returned later.
func (p *sleeperPool) close() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range free {
		_ = s.Close()
	}
}

func (s *servedWorkers) Crash(context.Context, faults.Event) error {
	return errors.New("a served store's workers are its own: a run with faults uses aebench's workers")
}

func (s *servedWorkers) InFlight() []faults.Affected { return nil }

func (s *servedWorkers) Stop() {}

// serveJob books and runs one served job: what fetch and runJob do for a
// claimed one, without crash points (a served run has none) or acks in
// batches (the store acknowledges each job as its handler ends).
func (e *engine) serveJob(ctx context.Context, w *worker, sleepers *sleeperPool, c jobstore.Claimed, end jobstore.Ender) {
	at := time.Now()
	e.c.claimed.at(0).Add(1)
	e.c.inFlight.at(0).Add(1)
	defer e.c.inFlight.at(0).Add(-1)
	got := []jobstore.Claimed{c}
	w.track(got)
	// In a worker process, untrack tells the coordinator the job left.
	defer w.untrack(c.Lease.JobID)
	e.events.Claimed(got, at)
	measured, book, entry := e.jobStarted(w, workItem{c: c, claimedAt: at})
	d, fail := e.handlerPlan(c.Lease.JobID, c.Job.Name, c.Lease.Attempt)
	hs := time.Now()
	if d > 0 {
		// The system renews its own lease while its handler runs.
		sl := sleepers.get()
		ok := sl.For(d)
		sleepers.put(sl)
		if !ok || ctx.Err() != nil {
			return // the hard stop: the store gives the job back
		}
	}
	he := time.Now()
	if measured {
		w.rec.Record(hist.TagHandler, he.Sub(hs))
	}
	p := pendingAck{lease: c.Lease, hs: hs, he: he, measured: measured, book: book, entry: entry}
	if fail {
		e.failJob(w, p, func(_ context.Context, _ jobstore.Lease, reason string) (jobstore.FailResult, error) {
			return end.Fail(reason)
		})
		return
	}
	err := end.Complete(nil)
	ce := time.Now()
	e.c.completeCalls.at(0).Add(1)
	if e.measuring(he) {
		w.rec.Record(hist.TagComplete, ce.Sub(he))
	}
	e.acked(w, p, err, ce, &book)
	if measured {
		w.rec.Record(hist.TagBookkeeping, book)
	}
}
