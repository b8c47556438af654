package engine

import (
	"context"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// pendingAck is one job whose handler has ended and whose Complete waits
// in its worker's acker.
type pendingAck struct {
	lease    jobstore.Lease
	hs, he   time.Time     // handler start and end
	measured bool          // the job's times are known and in the measured window
	book     time.Duration // bookkeeping spent on the job so far
	entry    ledger.Ref    // the job's ledger entry (in process), from its start
}

// acker is one worker's batched acknowledgements (workers.ack_batch > 1):
// executors hand it a job when its handler ends and free their slot; it
// completes the pending jobs with jobstore.CompleteAll (one CompleteMany
// call on a store with the batch-complete capability, one Complete each
// otherwise) when ack_batch are pending or ack_interval after the first
// of them, and books each job's outcome as an immediate Complete would.
// A job stays in flight (and in the worker's crash tracking) until its ack
// returns, so a worker that crashes with acks pending leaves those jobs to
// lease recovery, as a real worker would.
type acker struct {
	e        *engine
	w        *worker
	batch    int
	interval time.Duration

	mu      sync.Mutex
	pending []pendingAck
	first   time.Time     // when the oldest pending ack arrived
	wake    chan struct{} // the first ack arrived, or a batch is full
	stop    chan struct{} // closed once the worker's executors have ended
}

// startAcker starts w's acker on wg; stopAcker (after the executors end)
// flushes what is pending and ends it.
func (e *engine) startAcker(w *worker, wg *sync.WaitGroup) *acker {
	wc := e.cfg.Workers
	a := &acker{e: e, w: w, batch: wc.AckBatch, interval: wc.AckInterval,
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.run()
	}()
	return a
}

func (a *acker) stopAcker() { close(a.stop) }

// add queues one job's ack.
func (a *acker) add(p pendingAck) {
	a.mu.Lock()
	a.pending = append(a.pending, p)
	n := len(a.pending)
	if n == 1 {
		a.first = p.he
	}
	a.mu.Unlock()
	if n == 1 || n >= a.batch {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
}

// run waits for a batch to fill or its interval to pass, then flushes.
func (a *acker) run() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		a.mu.Lock()
		n, first := len(a.pending), a.first
		a.mu.Unlock()
		if n == 0 {
			select {
			case <-a.wake:
				continue
			case <-a.stop:
				return
			}
		}
		if left := time.Until(first.Add(a.interval)); n < a.batch && left > 0 {
			timer.Reset(left)
			select {
			case <-a.wake:
				timer.Stop()
				continue
			case <-timer.C:
			case <-a.stop:
				timer.Stop()
			}
		}
		a.flush()
	}
}

// take removes up to one batch of pending acks.
func (a *acker) take() []pendingAck {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.pending), a.batch)
	out := make([]pendingAck, n)
	copy(out, a.pending)
	a.pending = append(a.pending[:0], a.pending[n:]...)
	if len(a.pending) > 0 {
		a.first = a.pending[0].he
	}
	return out
}

// flush completes one batch and books each job's outcome.
func (a *acker) flush() {
	e, w := a.e, a.w
	ps := a.take()
	if len(ps) == 0 {
		return
	}
	if e.ft != nil && w.dead.Load() {
		// A crashed worker sends no acks: its jobs wait for lease recovery.
		for _, p := range ps {
			e.drop(w, p.lease.JobID)
		}
		return
	}
	cs := make([]jobstore.Completion, len(ps))
	for i, p := range ps {
		cs[i] = jobstore.Completion{Lease: p.lease}
	}
	t0 := time.Now()
	errs, err := jobstore.CompleteAll(e.calls.at(t0), e.wstore, cs)
	ce := time.Now()
	e.c.completeCalls.at(w.idx).Add(1)
	if e.measuring(t0) {
		w.rec.Record(hist.TagComplete, ce.Sub(t0))
	}
	for i, p := range ps {
		perr := err // the call as a whole failed: each outcome is unknown
		if err == nil && i < len(errs) {
			perr = errs[i]
		}
		if perr == nil && e.ft != nil && w.dead.Load() {
			// The worker crashed while this batch was on its way: the acks
			// landed but it will not report them. Read them back now, as
			// for a killed worker process, so the drain does not wait for
			// jobs that will never run again.
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
			e.rb.Settle(rctx, p.lease.JobID, p.lease.Attempt, p.lease.Token, ce)
			rcancel()
			e.drop(w, p.lease.JobID)
			continue
		}
		book := p.book
		if !e.acked(w, p, perr, ce, &book) {
			e.drop(w, p.lease.JobID)
			continue
		}
		if p.measured {
			w.rec.Record(hist.TagBookkeeping, book)
		}
		w.untrack(p.lease.JobID)
		e.c.inFlight.at(w.idx).Add(-1)
	}
}
