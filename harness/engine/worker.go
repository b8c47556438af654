package engine

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/workerproc"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

type workItem struct {
	c         jobstore.Claimed
	claimedAt time.Time
}

// worker is one claim loop with its executors. In a run without faults its
// stop channel is the engine's hard stop and nothing else is used; with
// faults it can crash at a crash point (see crashAt) and tracks its jobs in
// flight for the recovery measurement.
type worker struct {
	id   string
	idx  int
	gen  int
	rec  *hist.Recorder
	stop <-chan struct{} // closed at the hard stop, or when the worker crashes
	ctx  context.Context // the claim loop's context: ends on crash too
	quit func()

	dead  atomic.Bool
	armed atomic.Pointer[faults.Event]

	mu       sync.Mutex
	inflight map[string]*faults.Affected // nil unless faults are scheduled
	// onDone, in a worker process, tells the coordinator a job left the worker.
	onDone func(id string)
	// acks batches the worker's Completes (workers.ack_batch > 1); nil:
	// each job is completed as its handler ends.
	acks *acker
}

func (w *worker) track(c []jobstore.Claimed) {
	if w.inflight == nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	for _, x := range c {
		w.inflight[x.Lease.JobID] = &faults.Affected{ID: x.Lease.JobID, Attempt: x.Lease.Attempt, ClaimedAt: now}
	}
	w.mu.Unlock()
}

func (w *worker) markStarted(id string) {
	if w.inflight == nil {
		return
	}
	w.mu.Lock()
	if a := w.inflight[id]; a != nil {
		a.Started = true
	}
	w.mu.Unlock()
}

func (w *worker) untrack(id string) {
	if w.inflight == nil {
		return
	}
	if w.onDone != nil {
		w.onDone(id)
	}
	w.mu.Lock()
	delete(w.inflight, id)
	w.mu.Unlock()
}

func (w *worker) snapshot() []faults.Affected {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]faults.Affected, 0, len(w.inflight))
	for _, a := range w.inflight {
		out = append(out, *a)
	}
	return out
}

// newWorker is worker idx (generation gen: replacements of a crashed
// worker count up), not yet started.
func (e *engine) newWorker(ctx context.Context, idx, gen int) *worker {
	w := &worker{idx: idx, gen: gen, id: "w" + strconv.Itoa(idx), rec: e.newRecorder(), stop: e.hardStop, ctx: ctx, quit: func() {}}
	if gen > 0 {
		w.id += "." + strconv.Itoa(gen)
	}
	w.onDone = e.workerDone
	return w
}

// startWorker starts worker idx of generation gen (newWorker).
func (e *engine) startWorker(ctx context.Context, wg *sync.WaitGroup, idx, gen int) *worker {
	wc := e.cfg.Workers
	w := e.newWorker(ctx, idx, gen)
	if e.ft != nil {
		w.inflight = map[string]*faults.Affected{}
		stop := make(chan struct{})
		cctx, cancel := context.WithCancel(ctx)
		var once sync.Once
		w.ctx, w.stop = cctx, stop
		w.quit = func() { once.Do(func() { cancel(); close(stop) }) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-e.hardStop:
				w.quit()
			case <-stop:
			}
		}()
		e.local.add(w)
	}
	slots := make(chan struct{}, wc.Concurrency)
	if wc.AckBatch > 1 {
		w.acks = e.startAcker(w, wg)
	}
	var executors sync.WaitGroup
	if wc.Concurrency == 1 {
		// One slot: the claim loop runs each job itself, as a worker of
		// concurrency 1 is written (the plain programs' loops). Handing
		// it to an executor goroutine cost two goroutine wake-ups a job.
		executors.Add(1)
		go func() {
			defer executors.Done()
			timer := clock.NewSleeper(w.stop)
			defer timer.Close()
			e.fetch(w, slots, func(it workItem) { e.runJob(ctx, w, slots, timer, it) })
		}()
	} else {
		work := make(chan workItem, wc.Concurrency)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(work)
			e.fetch(w, slots, func(it workItem) { work <- it })
		}()
		for x := 0; x < wc.Concurrency; x++ {
			executors.Add(1)
			go func() {
				defer executors.Done()
				e.execute(ctx, w, slots, work)
			}()
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		executors.Wait()
		if w.acks != nil {
			w.acks.stopAcker() // flushes what the executors left pending
		}
	}()
	return w
}

// crashAt is a crash point in the worker loop: true when the worker has
// crashed (here or before) and the caller must drop the job without
// acking. Without faults it is one nil check.
func (e *engine) crashAt(w *worker, p faults.Point) bool {
	if e.ft == nil {
		return false
	}
	if w.dead.Load() {
		return true
	}
	ev := w.armed.Load()
	if ev == nil || ev.Point != p || !w.armed.CompareAndSwap(ev, nil) {
		return w.dead.Load()
	}
	if e.ft.onPoint != nil {
		e.ft.onPoint(w, *ev)
	} else {
		e.local.reached(w, *ev)
	}
	return true
}

// armedAt reports whether a crash is armed at p on w.
func (e *engine) armedAt(w *worker, p faults.Point) bool {
	if e.ft == nil {
		return false
	}
	ev := w.armed.Load()
	return ev != nil && ev.Point == p
}

// abandon drops a job a crashed (or hard-stopped) worker held: no event, no
// ack; its lease runs out and the recoverer takes it back.
func (e *engine) abandon(w *worker, id string, slots <-chan struct{}) {
	e.drop(w, id)
	<-slots
}

// drop forgets a job the worker will not acknowledge (abandon without the
// slot, which a job waiting in the acker has already freed).
func (e *engine) drop(w *worker, id string) {
	w.untrack(id)
	e.c.inFlight.at(w.idx).Add(-1)
}

// claimTimeout bounds a Claim in a run with faults: a black-holed or
// paused Redis must not hang a worker past its wait.
const claimTimeout = 5 * time.Second

// fetch claims jobs while the worker has free slots and passes each to
// run: an executor's channel, or the job itself when run inline.
func (e *engine) fetch(w *worker, slots chan struct{}, run func(workItem)) {
	wc := e.cfg.Workers
	ctx := w.ctx
	release := func(n int) {
		for ; n > 0; n-- {
			<-slots
		}
	}
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1
	more:
		for n < wc.ClaimBatch {
			select {
			case slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		t0 := time.Now()
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if e.ft != nil {
			cctx, cancel = context.WithTimeout(ctx, wc.ClaimWait+claimTimeout)
		}
		got, err := e.wstore.Claim(cctx, jobstore.ClaimRequest{WorkerID: w.id, Max: n, Lease: wc.Lease, Wait: wc.ClaimWait})
		cancel()
		t1 := time.Now()
		e.c.claimCalls.at(w.idx).Add(1)
		if err != nil && ctx.Err() == nil {
			e.c.claimErrors.Add(1)
			e.noteErr(err)
		}
		if err != nil && len(got) == 0 {
			release(n)
			if ctx.Err() != nil {
				return
			}
			// Do not spin on a failing Redis.
			sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
			continue
		}
		// A Claim that failed may still return jobs it leased to this
		// worker (jobstore's Claim: handed before the failure): they are
		// run like any claimed job, not left to their lease.
		release(n - len(got))
		if len(got) == 0 {
			e.c.claimEmpty.at(w.idx).Add(1)
			continue
		}
		if e.measuring(t0) {
			w.rec.Record(hist.TagClaim, t1.Sub(t0))
		}
		e.c.claimed.at(w.idx).Add(int64(len(got)))
		e.c.inFlight.at(w.idx).Add(int64(len(got)))
		w.track(got)
		e.events.Claimed(got, t1)
		if e.crashAt(w, faults.AfterClaim) {
			for _, c := range got {
				e.abandon(w, c.Lease.JobID, slots)
			}
			return
		}
		for _, c := range got {
			run(workItem{c: c, claimedAt: t1})
		}
	}
}

// execute runs claimed jobs: the handler, then Complete (now, or through
// the worker's acker) or Fail.
func (e *engine) execute(ctx context.Context, w *worker, slots <-chan struct{}, work <-chan workItem) {
	timer := clock.NewSleeper(w.stop)
	defer timer.Close()
	for it := range work {
		e.runJob(ctx, w, slots, timer, it)
	}
}

// runJob runs one claimed job to its outcome, or abandons it where a crash
// or the hard stop leaves it.
func (e *engine) runJob(ctx context.Context, w *worker, slots <-chan struct{}, timer *clock.Sleeper, it workItem) {
	id, attempt := it.c.Lease.JobID, it.c.Lease.Attempt
	if e.ft != nil && w.dead.Load() {
		e.abandon(w, id, slots)
		return
	}
	measured, book, entry := e.jobStarted(w, it)
	d, fail := e.handlerPlan(id, it.c.Job.Name, attempt)
	lease := it.c.Lease
	touch := e.firstTouch(it.c)
	hs := time.Now()
	if e.armedAt(w, faults.InHandler) {
		// Crash halfway through the handler.
		if !e.runHandler(ctx, w, timer, d/2, &lease, &touch) || e.crashAt(w, faults.InHandler) {
			e.abandon(w, id, slots)
			return
		}
		d -= d / 2
	}
	if !e.runHandler(ctx, w, timer, d, &lease, &touch) || e.crashAt(w, faults.AfterHandler) {
		// Hard stop after the drain, or a crash: abandon the job where it is.
		e.abandon(w, id, slots)
		return
	}
	he := time.Now()
	if measured {
		w.rec.Record(hist.TagHandler, he.Sub(hs))
	}
	p := pendingAck{lease: lease, hs: hs, he: he, measured: measured, book: book, entry: entry}
	switch {
	case fail:
		e.failJob(w, p, e.wstore.Fail)
	case w.acks != nil && (touch.IsZero() || time.Until(touch) > 2*e.cfg.Workers.AckInterval):
		// Batched acks: the slot frees now, the job stays in flight until
		// its acker completes it, within the ack interval. A job still
		// under a provisional lease (firstTouch) whose renewal point comes
		// sooner than that is completed at once: its lease could end
		// before the batch's flush.
		w.acks.add(p)
		<-slots
		return
	default:
		err := e.wstore.Complete(e.calls.at(he), lease, nil)
		ce := time.Now()
		e.c.completeCalls.at(w.idx).Add(1)
		if e.measuring(he) {
			w.rec.Record(hist.TagComplete, ce.Sub(he))
		}
		if !e.acked(w, p, err, ce, &book) {
			e.abandon(w, id, slots)
			return
		}
	}
	if measured {
		w.rec.Record(hist.TagBookkeeping, book)
	}
	w.untrack(id)
	e.c.inFlight.at(w.idx).Add(-1)
	<-slots
}

// jobStarted books a job's start: the ledger's event, the crash tracker,
// and the dispatch and queue-wait histograms. measured says the job counts
// in the window's histograms; book is the bookkeeping time so far; entry
// the job's ledger entry when the ledger is in process.
func (e *engine) jobStarted(w *worker, it workItem) (measured bool, book time.Duration, entry ledger.Ref) {
	id, attempt := it.c.Lease.JobID, it.c.Lease.Attempt
	start := time.Now()
	jt := e.events.Started(id, attempt, start)
	book = time.Since(start)
	e.c.started.at(w.idx).Add(1)
	if e.ft != nil {
		w.markStarted(id)
		e.ft.tracker.Started(id, start)
	}
	if e.measuring(it.claimedAt) {
		w.rec.Record(hist.TagDispatch, start.Sub(it.claimedAt))
	}
	measured = jt.Known && jt.Measured
	if measured && !jt.Due.IsZero() {
		w.rec.Record(hist.TagQueueWait, start.Sub(jt.Due))
		if jt.Scheduled {
			w.rec.Record(hist.TagLateness, start.Sub(jt.Due))
		}
	}
	return measured, book, jt.Ref
}

// failFunc fails a job's attempt: the store's Fail, or a served job's.
type failFunc func(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error)

// failJob sends an injected handler failure through fail and books its
// outcome.
func (e *engine) failJob(w *worker, p pendingAck, fail failFunc) {
	id, attempt := p.lease.JobID, p.lease.Attempt
	fr, err := fail(e.calls.at(p.he), p.lease, "aebench: injected handler failure")
	fe := time.Now()
	if e.measuring(p.he) {
		w.rec.Record(hist.TagFail, fe.Sub(p.he))
	}
	switch {
	case errors.Is(err, jobstore.ErrLeaseLost):
		e.c.fenced.Add(1)
		e.events.Fenced(id, attempt, fe)
	case err != nil:
		e.c.failErrors.Add(1)
		if rclient.IsOOM(err) {
			e.c.oomFails.Add(1)
		}
		e.noteErr(err)
		e.events.Unknown(id, attempt, p.lease.Token, fe)
	default:
		e.events.Failed(id, attempt, fr, fe)
		if fr.Status == jobstore.StatusFailed {
			e.c.dead.Add(1)
		} else {
			e.c.retried.Add(1)
		}
	}
}

// firstTouch is when a worker must renew the lease of a job it claimed,
// whatever its heartbeat: halfway through the lease, when the store
// granted a shorter one than asked (jobstore's Claim: a hand-off's
// provisional lease, which Recover takes back untouched). Zero: the lease
// is the one asked for (within a tenth), or the store does not say when it
// began.
func (e *engine) firstTouch(c jobstore.Claimed) time.Time {
	began := c.Job.StartedAt
	if began.IsZero() || c.Lease.Deadline.IsZero() {
		return time.Time{}
	}
	granted := c.Lease.Deadline.Sub(began)
	if granted >= e.cfg.Workers.Lease-e.cfg.Workers.Lease/10 {
		return time.Time{}
	}
	return began.Add(granted / 2)
}

// runHandler sleeps for d, extending the lease on the heartbeat interval
// when heartbeats are on, and at *touch when it is set (firstTouch: an
// Extend that renews a provisional lease to the one asked for, with or
// without heartbeats, then cleared); false when the run was hard-stopped
// or the worker crashed meanwhile.
func (e *engine) runHandler(ctx context.Context, w *worker, timer *clock.Sleeper, d time.Duration, lease *jobstore.Lease, touch *time.Time) bool {
	if d <= 0 {
		return true // a 0ms handler: no clock reads
	}
	wc := e.cfg.Workers
	interval := time.Duration(math.MaxInt64)
	if every := wc.HeartbeatEvery(); every > 0 {
		interval = every
	}
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		wait := min(left, interval)
		if !touch.IsZero() {
			wait = min(wait, max(time.Until(*touch), 0))
		}
		if !timer.For(wait) {
			return false
		}
		if time.Now().Before(end) {
			if e.ft != nil && w.dead.Load() {
				return false // a crashed worker sends no more heartbeats
			}
			cctx, cancel := context.WithTimeout(ctx, finishTimeout)
			nl, err := e.wstore.Extend(cctx, *lease, wc.Lease)
			cancel()
			*touch = time.Time{} // renewed, or lost: no second first touch
			switch {
			case err == nil:
				*lease = nl
				e.c.extends.Add(1)
			case errors.Is(err, jobstore.ErrLeaseLost):
				e.c.fenced.Add(1)
				e.events.Fenced(lease.JobID, lease.Attempt, time.Now())
			default:
				e.c.extErrs.Add(1)
			}
		}
	}
}

// acked books the outcome of one job's Complete (err, returned at ce):
// completed, fenced (ErrLeaseLost) or unknown (read back later); book
// accumulates the bookkeeping time. False: the worker crashed right after
// the Complete (crash point after_complete) and drops the job unbooked.
func (e *engine) acked(w *worker, p pendingAck, err error, ce time.Time, book *time.Duration) bool {
	id, attempt := p.lease.JobID, p.lease.Attempt
	rec := w.rec
	switch {
	case errors.Is(err, jobstore.ErrLeaseLost):
		e.c.fenced.Add(1)
		e.events.Fenced(id, attempt, ce)
	case err != nil:
		e.c.completeErrors.Add(1)
		if rclient.IsOOM(err) {
			e.c.oomCompletes.Add(1)
			// The ledger's, or a worker process's pipe to it.
			if r, ok := e.events.(interface{ CompleteRefused(string) }); ok {
				r.CompleteRefused(id)
			}
		}
		e.noteErr(err)
		e.events.Unknown(id, attempt, p.lease.Token, ce)
	default:
		if e.crashAt(w, faults.AfterComplete) {
			return false
		}
		b0 := time.Now()
		var jt ledger.JobTimes
		if pe, ok := e.events.(*workerproc.Pipe); ok {
			jt = pe.CompletedAfter(id, attempt, ce, p.he) // the coordinator records the ack wait
		} else if p.entry.Valid() && e.led != nil {
			jt = e.led.CompletedAt(p.entry, ce)
		} else {
			jt = e.events.Completed(id, attempt, ce)
		}
		*book += time.Since(b0)
		e.c.completed.at(w.idx).Add(1)
		if jt.Known && jt.Measured {
			rec.Record(hist.TagAckWait, ce.Sub(p.he))
		}
		if jt.Known && jt.Measured && !jt.Delayed {
			if attempt == 0 {
				rec.Record(hist.TagE2E, ce.Sub(jt.Intended))
				rec.Record(hist.TagE2ENet, ce.Sub(jt.Intended)-p.he.Sub(p.hs))
			} else {
				rec.Record(hist.TagE2ERetried, ce.Sub(jt.Intended))
			}
		}
	}
	return true
}
