package engine

// This file is what the engine does for a store whose jobs run in the
// worker loop of the job system it stands for (a peer behind its driver,
// docs/drivers.md): every worker is one of its processes, it plays the
// engine's handler plan, and the loss or early starts it declares are
// reported as its behaviour rather than failing the run.

import (
	"fmt"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
)

// external prepares a store whose jobs run in its own worker loop (a
// peer's driver): every worker must be one of its processes, and it plays
// the handler aebench's workers would.
func (e *engine) external() error {
	if _, ok := e.store.(jobstore.ExternalWorkers); !ok {
		return nil
	}
	wc := e.cfg.Workers
	if wc.InProcess() > 0 || wc.Remote > 0 {
		return fmt.Errorf("%w: backend %s runs its jobs in its own worker processes: workers.processes must equal workers.count (%d), got %d (and workers.remote 0)",
			jobstore.ErrInvalid, e.cfg.Backend.Name, wc.Count, wc.Processes)
	}
	if hp, ok := e.store.(jobstore.HandlerPlanner); ok {
		hp.SetHandlerPlan(e.handlerPlan)
	}
	if ed, ok := e.store.(jobstore.EarlyDeclarer); ok {
		e.led.AllowEarly(ed.DeclaredEarly())
	}
	return nil
}

// AllowEarly makes starts up to max before a job's RunAt the documented
// behaviour of the store under test (why): the ledger's check reports them
// with their count instead of failing the run; an earlier start still
// fails it.
func (l *Ledger) AllowEarly(max time.Duration, why string) { l.early, l.earlyWhy = max, why }

// handlerPlan is how long attempt a of job id runs and whether it fails:
// the same draw for aebench's workers and a driver's.
func (e *engine) handlerPlan(id string, attempt int) (time.Duration, bool) {
	wc := e.cfg.Workers
	jr := jobRand(e.cfg.Seed, id, attempt)
	d := wc.Handler.Sample(jr.float(), jr.float())
	return d, wc.Fail > 0 && jr.float() < wc.Fail
}

// declaredLoss is why the store loses jobs under this run's faults, by its
// own documents (jobstore.LossDeclarer); "" when it declares no loss under
// any of them.
func (e *engine) declaredLoss() string {
	ld, ok := e.store.(jobstore.LossDeclarer)
	if !ok {
		return ""
	}
	kinds, why := ld.DeclaredLoss()
	for _, f := range e.cfg.Faults {
		for _, k := range kinds {
			if string(f.Kind) == k {
				return why
			}
		}
	}
	return ""
}

// lossBound is the most jobs the landed faults may lose by the system's
// declaration: the jobs they caught in flight, or, for a store that
// declares what a process may hold unreported (jobstore.HoldDeclarer),
// what the killed processes could hold, whichever is more.
func (e *engine) lossBound(sum faults.Summary) (int, string) {
	bound, how := sum.Affected, fmt.Sprintf("the %d the faults caught in flight", sum.Affected)
	hd, ok := e.store.(jobstore.HoldDeclarer)
	ld, _ := e.store.(jobstore.LossDeclarer)
	if !ok || ld == nil {
		return bound, how
	}
	kinds, _ := ld.DeclaredLoss()
	// A worker kill hits one process; a fault on Redis or the network
	// (a restart the workers quit on) hits every worker process.
	kills := 0
	for _, k := range kinds {
		n := sum.Faults[faults.Kind(k)]
		if faults.Kind(k) != faults.WorkerKill {
			n *= max(1, e.cfg.Workers.Processes)
		}
		kills += n
	}
	per := hd.MayHold(e.cfg.Workers.Concurrency)
	if kills*per > bound {
		bound = kills * per
		how = fmt.Sprintf("the %d that the %d worker process(es) the faults hit could hold (%d each; %d seen in flight)", bound, kills, per, sum.Affected)
	}
	return bound, how
}

// declaredLoss marks a loss the system declares; a loss beyond bound (see
// lossBound) is not what it declares, and fails the run.
func declaredLoss(r *LedgerReport, why string, bound int, how string) {
	if r.Lost == 0 {
		return
	}
	r.LostDeclared = why
	if r.Lost > int64(bound) {
		r.LostExpected = false
		r.Problems = append(r.Problems, fmt.Sprintf("%d job(s) lost, beyond %s (the loss the system declares): e.g. %v",
			r.Lost, how, r.LostIDs))
		r.OK = false
	}
}
