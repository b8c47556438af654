package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// workerEvents is what a worker loop reports: the events the ledger takes,
// plus the claims (a worker process sends them so the coordinator knows
// what it held when it was killed).
type workerEvents interface {
	ledger.Events
	Claimed(c []jobstore.Claimed, at time.Time)
	// Unknown: Complete or Fail returned an error other than ErrLeaseLost,
	// so whether the store applied it is unknown (a reply lost on a reset
	// connection, a Redis that died after applying it).
	Unknown(id string, attempt int, token string, at time.Time)
}

// ledgerEvents feeds the in-process ledger; claims are tracked by the
// worker itself; unknown outcomes are read back from the store.
type ledgerEvents struct {
	*ledger.Ledger
	resolve func(id string, attempt int, token string, at time.Time)
}

func (ledgerEvents) Claimed([]jobstore.Claimed, time.Time) {}

func (l ledgerEvents) Unknown(id string, attempt int, token string, at time.Time) {
	l.resolve(id, attempt, token, at)
}

// FaultSetup is what the runner prepares for a run with faults.
type FaultSetup struct {
	Events  []faults.Event
	Redis   faults.RedisNode // nil unless redis.mode embedded
	Proxy   *faults.Proxy    // nil unless a network fault is scheduled
	RecLoop *LoopCrash       // nil unless a recoverer_crash is scheduled
	MovLoop *LoopCrash       // nil unless a mover_crash is scheduled (and a mover loop runs)
	// KillMaster: see faults.Hooks; nil unless a master_kill is scheduled.
	KillMaster func(ctx context.Context) (string, error)
	// Partition: see faults.Hooks; nil unless a net_partition is scheduled.
	Partition func(ctx context.Context) (string, func() error, error)
	// Ballast: see faults.Hooks; nil unless a memory_pressure is scheduled.
	Ballast func(ctx context.Context, fill float64, ttl time.Duration) (func() error, int64, error)
	// Snapshot, under RDB persistence with a redis_restart: the fork
	// window of the last snapshot before the first kill, and the kill's
	// time (false: no kill came). nil otherwise.
	Snapshot func() (ForkWindow, time.Time, bool)
}

// ForkWindow bounds when a snapshot's fork happened: the dataset it keeps
// is Redis's at a moment in (Lo, Hi].
type ForkWindow struct{ Lo, Hi time.Time }

// faultRun is the engine's fault state; nil in a run without faults, so
// every hook on the job path is one nil check.
type faultRun struct {
	tracker *faults.Tracker
	recLoop *LoopCrash
	movLoop *LoopCrash
	// onPoint replaces the in-process crash (a worker process announces the
	// point to its coordinator and waits to be killed).
	onPoint func(w *worker, ev faults.Event)

	mu  sync.Mutex
	rng *rand.Rand // picks the worker a fault without a target hits
}

// newFaultRun starts the fault state; fs is nil in a run with worker
// processes but no faults.
func newFaultRun(seed int64, base time.Time, fs *FaultSetup) *faultRun {
	ft := &faultRun{tracker: faults.NewTracker(base), rng: rand.New(rand.NewPCG(uint64(seed), 0xc4a5))}
	if fs != nil {
		ft.recLoop, ft.movLoop = fs.RecLoop, fs.MovLoop
	}
	return ft
}

// pick returns a random number in [0, n).
func (ft *faultRun) pick(n int) int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.rng.IntN(n)
}

// finish records armed crashes that never landed.
func (ft *faultRun) finish(local *localWorkers) {
	now := time.Now()
	local.skipArmed(ft.tracker, now)
	for _, l := range []*LoopCrash{ft.recLoop, ft.movLoop} {
		if l != nil {
			if ev := l.pending.Load(); ev != nil {
				ft.tracker.Skipped(*ev, now, "the loop never had work between its steps (nothing to recover or promote)")
			}
		}
	}
}

// maxUnreported bounds the jobs attributeUnreported reads back.
const maxUnreported = 1000

// attributeUnreported finds, among the jobs dead-lettered on an attempt
// that never started and that no fault caught in flight, those leased to
// a worker a fault then killed: the claim's or the hand-off's reply was in
// transit to it, so it never reported them. Each record's last lease
// names its worker (a dead letter keeps it) and when it began; the
// tracker adds the job to that worker's fault (faults.Tracker.Leased).
// What stays unexplained is a claimer that was handed jobs and never ran
// them with no fault to show for it, and fails the run (Ledger's check);
// it returns those jobs' last leases, "<id> leased to <worker> at <s>"
// (wall-clock seconds into the run, as a fault's run_at_s at real speed),
// up to ledger.MaxExamples.
func (e *engine) attributeUnreported() []string {
	var unexplained []string
	for _, id := range e.led.DeadUnstarted(maxUnreported) {
		if e.ft.tracker.Caught(id) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
		j, err := e.store.Get(ctx, id)
		cancel()
		if err == nil && j.WorkerID != "" && e.ft.tracker.Leased(j.WorkerID, j.StartedAt, id) {
			continue
		}
		if len(unexplained) < ledger.MaxExamples {
			lease := "no lease read"
			if err == nil && j.WorkerID != "" {
				lease = fmt.Sprintf("leased to %s at %.3fs", j.WorkerID, j.StartedAt.Sub(e.t0).Seconds())
			}
			unexplained = append(unexplained, id+" "+lease)
		}
	}
	return unexplained
}

// LoopCrash lets a recoverer or mover crash between its steps: the loop
// uses a store of its own on a faults.CrashClient.
type LoopCrash struct {
	store   jobstore.Store
	cc      *faults.CrashClient
	pending atomic.Pointer[faults.Event]
	tracker *faults.Tracker
}

// NewLoopCrash makes a loop's crash setup: the loop uses store, built on
// the crash client cc.
func NewLoopCrash(store jobstore.Store, cc *faults.CrashClient) *LoopCrash {
	return &LoopCrash{store: store, cc: cc}
}

func (l *LoopCrash) arm(ev faults.Event) error {
	if !l.pending.CompareAndSwap(nil, &ev) {
		return errors.New("a crash is already armed on this loop")
	}
	l.cc.Arm(ev.Fault.Steps)
	return nil
}

func (l *LoopCrash) begin() {
	if l != nil {
		l.cc.Begin()
	}
}

// crashed handles an error of a maintenance call: true when it was the
// injected crash; the loop then stays down for ReplaceAfter.
func (l *LoopCrash) crashed(ctx context.Context, _ *engine, err error, name string) bool {
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
