package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
)

// workerEvents is what a worker loop reports: the Events the ledger takes,
// plus the claims (a worker process sends them so the coordinator knows
// what it held when it was killed).
type workerEvents interface {
	Events
	Claimed(c []jobstore.Claimed, at time.Time)
	// Unknown: Complete or Fail returned an error other than ErrLeaseLost,
	// so whether the store applied it is unknown (a reply lost on a reset
	// connection, a Redis that died after applying it).
	Unknown(id string, attempt int, token string, at time.Time)
}

// ledgerEvents feeds the in-process ledger; claims are tracked by the
// worker itself; unknown outcomes are read back from the store.
type ledgerEvents struct {
	*Ledger
	resolve func(id string, attempt int, token string, at time.Time)
}

func (ledgerEvents) Claimed([]jobstore.Claimed, time.Time) {}

func (l ledgerEvents) Unknown(id string, attempt int, token string, at time.Time) {
	l.resolve(id, attempt, token, at)
}

// resolveUnknown reads back a job whose Complete or Fail outcome is
// unknown, as Jepsen's checkers do with a final read: a record completed
// (or dead-lettered) under this attempt's lease token was finished by that
// call, and the ledger is told; one still held under the token was not,
// and the recoverer will take it back when the lease expires. It retries
// while Redis is unreachable, for up to resolveFor.
func (e *engine) resolveUnknown(id string, attempt int, token string, at time.Time) {
	e.resolvers.Add(1)
	go func() {
		defer e.resolvers.Done()
		deadline := time.Now().Add(resolveFor)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			j, err := e.store.Get(ctx, id)
			cancel()
			if err == nil {
				if j.LeaseToken == token {
					switch j.Status {
					case jobstore.StatusCompleted:
						e.led.Completed(id, attempt, at)
						e.c.completed.Add(1)
						e.c.ackLost.Add(1)
					case jobstore.StatusFailed:
						e.led.Failed(id, attempt, jobstore.FailResult{Status: jobstore.StatusFailed}, at)
						e.c.ackLost.Add(1)
					}
				}
				return
			}
			if errors.Is(err, jobstore.ErrNotFound) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// resolveFor bounds the read-back of an unknown outcome.
const resolveFor = 20 * time.Second

// faultSetup is what the runner prepares for a run with faults.
type faultSetup struct {
	events  []faults.Event
	redis   faults.RedisNode // nil unless redis.mode embedded
	proxy   *faults.Proxy    // nil unless a network fault is scheduled
	recLoop *loopCrash       // nil unless a recoverer_crash is scheduled
	movLoop *loopCrash       // nil unless a mover_crash is scheduled (and a mover loop runs)
	procs   *procSetup       // nil unless workers.processes > 0
}

// faultRun is the engine's fault state; nil in a run without faults, so
// every hook on the job path is one nil check.
type faultRun struct {
	tracker *faults.Tracker
	setup   *faultSetup
	recLoop *loopCrash
	movLoop *loopCrash
	// onPoint replaces the in-process crash (a worker process announces the
	// point to its coordinator and waits to be killed).
	onPoint func(w *worker, ev faults.Event)

	ctx context.Context // the workers' context, for replacements
	wg  *sync.WaitGroup

	mu      sync.Mutex
	rng     *rand.Rand
	workers map[int]*worker // live in-process workers by index
	procs   *procPool
}

func newFaultRun(seed int64, base time.Time, fs *faultSetup) *faultRun {
	return &faultRun{tracker: faults.NewTracker(base), setup: fs, recLoop: fs.recLoop, movLoop: fs.movLoop,
		rng: rand.New(rand.NewPCG(uint64(seed), 0xc4a5)), workers: map[int]*worker{}}
}

func (ft *faultRun) addWorker(w *worker) {
	ft.mu.Lock()
	ft.workers[w.idx] = w
	ft.mu.Unlock()
}

// reached: worker w hit the crash point ev armed.
func (ft *faultRun) reached(e *engine, w *worker, ev faults.Event) {
	if ft.onPoint != nil {
		ft.onPoint(w, ev)
		return
	}
	at := time.Now()
	w.dead.Store(true)
	w.quit()
	ft.mu.Lock()
	if ft.workers[w.idx] == w {
		delete(ft.workers, w.idx)
	}
	ft.mu.Unlock()
	ft.tracker.Fault(ev, w.id, at, w.snapshot())
	ft.wg.Add(1)
	go func() {
		defer ft.wg.Done()
		t := time.NewTimer(ev.Fault.ReplaceAfter)
		defer t.Stop()
		select {
		case <-e.hardStop:
			return
		case <-t.C:
		}
		e.startWorker(ft.ctx, ft.wg, w.idx, w.gen+1)
	}()
}

// crashWorker arms a crash on an in-process worker (the Injector's hook).
func (ft *faultRun) crashWorker(ev faults.Event) error {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	var w *worker
	if ev.Worker >= 0 {
		w = ft.workers[ev.Worker]
		if w == nil {
			return fmt.Errorf("worker w%d is down (crashed, not yet replaced)", ev.Worker)
		}
	} else {
		var live []*worker
		for i := 0; i < len(ft.workers)+64 && len(live) < len(ft.workers); i++ {
			if x := ft.workers[i]; x != nil {
				live = append(live, x)
			}
		}
		if len(live) == 0 {
			return errors.New("every in-process worker is down")
		}
		w = live[ft.rng.IntN(len(live))]
	}
	if !w.armed.CompareAndSwap(nil, &ev) {
		return fmt.Errorf("worker %s already has a crash armed", w.id)
	}
	return nil
}

// inFlight lists every job in flight, in process and in worker processes.
func (ft *faultRun) inFlight() []faults.Affected {
	ft.mu.Lock()
	ws := make([]*worker, 0, len(ft.workers))
	for _, w := range ft.workers {
		ws = append(ws, w)
	}
	ft.mu.Unlock()
	var out []faults.Affected
	for _, w := range ws {
		out = append(out, w.snapshot()...)
	}
	if ft.procs != nil {
		out = append(out, ft.procs.inFlight()...)
	}
	return out
}

// finish records armed crashes that never landed.
func (ft *faultRun) finish() {
	now := time.Now()
	ft.mu.Lock()
	for _, w := range ft.workers {
		if ev := w.armed.Load(); ev != nil {
			ft.tracker.Skipped(*ev, now, "worker "+w.id+" never reached "+string(ev.Point))
		}
	}
	ft.mu.Unlock()
	for _, l := range []*loopCrash{ft.recLoop, ft.movLoop} {
		if l != nil {
			if ev := l.pending.Load(); ev != nil {
				ft.tracker.Skipped(*ev, now, "the loop never had work between its steps (nothing to recover or promote)")
			}
		}
	}
}

// loopCrash lets a recoverer or mover crash between its steps: the loop
// uses a store of its own on a faults.CrashClient.
type loopCrash struct {
	store   jobstore.Store
	cc      *faults.CrashClient
	pending atomic.Pointer[faults.Event]
	tracker *faults.Tracker
}

func (l *loopCrash) arm(ev faults.Event) error {
	if !l.pending.CompareAndSwap(nil, &ev) {
		return errors.New("a crash is already armed on this loop")
	}
	l.cc.Arm()
	return nil
}

func (l *loopCrash) begin() {
	if l != nil {
		l.cc.Begin()
	}
}

// crashed handles an error of a maintenance call: true when it was the
// injected crash; the loop then stays down for ReplaceAfter.
func (l *loopCrash) crashed(ctx context.Context, _ *engine, err error, name string) bool {
	if l == nil || !errors.Is(err, faults.ErrCrashed) {
		return false
	}
	ev := l.pending.Swap(nil)
	if ev == nil {
		return true
	}
	l.tracker.Fault(*ev, name, time.Now(), nil)
	sleepUntil(ctx, time.Now().Add(ev.Fault.ReplaceAfter))
	return true
}
