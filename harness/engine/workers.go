package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aebench/aebench/faults"
)

// Workers is one group of a run's workers, in this process or in worker
// processes, as OpenMessaging Benchmark's Worker with LocalWorker and
// HttpWorkerClient: the engine starts and stops it, the fault injector
// crashes one of its workers, and the recovery measurement asks what its
// workers hold.
type Workers interface {
	// Start starts the group's workers; they run until the engine's hard
	// stop.
	Start(ctx context.Context) error
	// Crash crashes one worker (ev.Worker, or a random live one) at ev's
	// crash point and replaces it after ev.Fault.ReplaceAfter.
	Crash(ctx context.Context, ev faults.Event) error
	// InFlight lists the jobs the group's live workers hold.
	InFlight() []faults.Affected
	// Stop ends the group's workers; the engine calls it after the hard
	// stop, and waits for them on its wait group.
	Stop()
}

// localWorkers are the in-process workers: workers.count minus
// workers.processes of them.
type localWorkers struct {
	e   *engine
	wg  *sync.WaitGroup
	ctx context.Context // for replacements

	mu      sync.Mutex
	workers map[int]*worker // live workers by index, tracked when faults run
}

func newLocalWorkers(e *engine, wg *sync.WaitGroup) *localWorkers {
	return &localWorkers{e: e, wg: wg, workers: map[int]*worker{}}
}

func (l *localWorkers) Start(ctx context.Context) error {
	l.ctx = ctx
	wc := l.e.cfg.Workers
	for w := 0; w < wc.InProcess(); w++ {
		l.e.startWorker(ctx, l.wg, w, 0)
	}
	return nil
}

// Stop has nothing to do: the hard stop ends the workers.
func (l *localWorkers) Stop() {}

func (l *localWorkers) add(w *worker) {
	l.mu.Lock()
	l.workers[w.idx] = w
	l.mu.Unlock()
}

// Crash arms a crash on a worker; it lands when the worker reaches the
// crash point (see engine.crashAt).
func (l *localWorkers) Crash(_ context.Context, ev faults.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w *worker
	if ev.Worker >= 0 {
		w = l.workers[ev.Worker]
		if w == nil {
			return fmt.Errorf("worker w%d is down (crashed, not yet replaced)", ev.Worker)
		}
	} else {
		idx := make([]int, 0, len(l.workers))
		for i := range l.workers {
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			return errors.New("every in-process worker is down")
		}
		sort.Ints(idx)
		w = l.workers[idx[l.e.ft.pick(len(idx))]]
	}
	if !w.armed.CompareAndSwap(nil, &ev) {
		return fmt.Errorf("worker %s already has a crash armed", w.id)
	}
	return nil
}

// reached: worker w hit the crash point ev armed. It dies where it is and
// a new one starts after ReplaceAfter.
func (l *localWorkers) reached(w *worker, ev faults.Event) {
	e := l.e
	at := time.Now()
	w.dead.Store(true)
	w.quit()
	l.mu.Lock()
	if l.workers[w.idx] == w {
		delete(l.workers, w.idx)
	}
	l.mu.Unlock()
	e.ft.tracker.Fault(ev, w.id, at, w.snapshot())
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTimer(ev.Fault.ReplaceAfter)
		defer t.Stop()
		select {
		case <-e.hardStop:
			return
		case <-t.C:
		}
		e.startWorker(l.ctx, l.wg, w.idx, w.gen+1)
	}()
}

func (l *localWorkers) InFlight() []faults.Affected {
	l.mu.Lock()
	ws := make([]*worker, 0, len(l.workers))
	for _, w := range l.workers {
		ws = append(ws, w)
	}
	l.mu.Unlock()
	var out []faults.Affected
	for _, w := range ws {
		out = append(out, w.snapshot()...)
	}
	return out
}

// skipArmed records the armed crashes that never landed.
func (l *localWorkers) skipArmed(tr *faults.Tracker, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.workers {
		if ev := w.armed.Load(); ev != nil {
			tr.Skipped(*ev, now, "worker "+w.id+" never reached "+string(ev.Point))
		}
	}
}
