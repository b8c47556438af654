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
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/ledger"
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
		// A driver's worker loop knows the job's id, not its name: the
		// phase comes from the ledger's intended time.
		hp.SetHandlerPlan(func(id string, attempt int) (time.Duration, bool) {
			return e.handlerPlan(id, e.nameOf(id), attempt)
		})
	}
	if ed, ok := e.store.(jobstore.EarlyDeclarer); ok {
		e.led.AllowEarly(ed.DeclaredEarly())
	}
	return nil
}

// handlerPlan is how long attempt a of job id runs and whether it fails:
// the same draw for aebench's workers and a driver's, from the workload of
// the phase its name carries (conditions.Config.JobName).
//
// With a job mix the job's kind (drawn from its id) gives the handler and
// the fail share; a failure window fails a further share of the attempts
// of the jobs intended in it (conditions.FailWindow, carried in the name),
// drawn after the kind's own, so a run without windows draws what it
// always drew.
func (e *engine) handlerPlan(id, name string, attempt int) (time.Duration, bool) {
	var w conditions.Workload
	if len(e.cfg.Jobs) > 0 {
		// The job's kind, drawn from its id (conditions.Config.Class).
		kind, _ := e.cfg.Class(id)
		w = e.cfg.Jobs[kind].Workload()
	} else {
		w = e.cfg.WorkloadOf(conditions.PhaseOfName(name))
	}
	jr := conditions.JobRand(e.cfg.Seed, id, attempt)
	d := w.Handler.Sample(jr.Float(), jr.Float())
	fail := w.Fail > 0 && jr.Float() < w.Fail
	if i := conditions.WindowOfName(name); !fail && i >= 0 && i < len(e.cfg.FailWindows) {
		fail = jr.Float() < e.cfg.FailWindows[i].Share
	}
	return d, fail
}

// nameOf is the name job id was enqueued with: its phase's JobName, from
// the ledger's intended time.
func (e *engine) nameOf(id string) string {
	if len(e.cfg.Phases) == 0 && len(e.cfg.FailWindows) == 0 {
		return "bench"
	}
	at, ok := e.led.IntendedAt(id)
	if !ok {
		return "bench"
	}
	since := at.Sub(e.t0)
	return e.cfg.JobNameAt(e.cfg.PhaseIndexAt(since), e.cfg.WindowAt(since))
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

// judgeDeclaredLoss has the ledger judge, job by job, which lost jobs the
// store's declaration (why, under the fault kinds it names) covers
// (ledger.Ledger.JudgeDeclaredLoss).
func (e *engine) judgeDeclaredLoss(r *ledger.Report, why string, sum faults.Summary) {
	kinds, _ := e.store.(jobstore.LossDeclarer).DeclaredLoss()
	e.led.JudgeDeclaredLoss(r, ledger.Declared{Why: why, Kinds: kinds, Holds: e.holdsExtra}, sum)
}

// holdsExtra is what one fault of kind k may leave held and unreported: a
// kind that acts on one worker (a kill) hits one process; a fault on Redis
// or the network (a restart the workers quit on) hits every worker process.
func (e *engine) holdsExtra(k faults.Kind) int {
	hd, ok := e.store.(jobstore.HoldDeclarer)
	if !ok {
		return 0
	}
	if d, _ := faults.Describe(k); d.Worker {
		return hd.HoldsExtra()
	}
	return hd.HoldsExtra() * max(1, e.cfg.Workers.Processes)
}
