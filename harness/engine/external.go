package engine

// This file is what the engine does for a store whose jobs run in the
// worker loop of the job system it stands for (a peer behind its driver,
// docs/drivers.md): every worker is one of its processes, it plays the
// engine's handler plan, and the loss or early starts it declares are
// reported as its behaviour rather than failing the run.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
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
		hp.SetHandlerPlan(e.handlerPlan)
	}
	if ed, ok := e.store.(jobstore.EarlyDeclarer); ok {
		e.led.AllowEarly(ed.DeclaredEarly())
	}
	return nil
}

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

// fetchHold bounds how long before a fault a job queued due at once may
// have become due and still be held unreported by the process the fault
// killed: a free worker fetches a due job at once and reports its start
// within milliseconds, so a job due longer before was either run or never
// fetched. A scheduled job may wait for the system's scheduler pass, so
// only "due by then" bounds it.
const fetchHold = time.Second

// judgeDeclaredLoss decides, job by job, which lost jobs the system's
// declaration (why, under the fault kinds it names) covers: each that a
// fault of those kinds caught in flight, and up to HoldsExtra
// (jobstore.HoldDeclarer) per process such a fault hit of jobs never
// started, enqueued before the fault and due by then (a job queued due at
// once: within fetchHold), the earliest fault after each first. Every
// other lost job fails the run, named: a job the driver acknowledged and
// never stored is not made good by a kill seconds later.
func (e *engine) judgeDeclaredLoss(r *ledger.Report, why string, sum faults.Summary) {
	if r.Lost == 0 {
		return
	}
	r.LostDeclared = why
	kinds, _ := e.store.(jobstore.LossDeclarer).DeclaredLoss()
	var hits []*declaredHit
	caught := map[string]bool{}
	for _, rec := range sum.Records {
		if rec.Skipped != "" || !slices.Contains(kinds, string(rec.Kind)) {
			continue
		}
		for _, id := range rec.JobIDs() {
			caught[id] = true
		}
		hits = append(hits, &declaredHit{at: rec.Time(), budget: e.holdsExtra(rec.Kind)})
	}
	var beyond []string
	for _, j := range e.led.LostJobs() {
		if caught[j.ID] || !j.Started && claimHeld(hits, j) {
			r.LostDeclaredJobs++
			continue
		}
		beyond = append(beyond, j.ID)
	}
	if len(beyond) == 0 {
		return
	}
	sort.Strings(beyond)
	r.LostExpected = false
	r.OK = false
	r.Problems = append(r.Problems, fmt.Sprintf("%d job(s) lost that the system's declaration does not cover (neither in flight at a %s fault nor one of the %d job(s) per killed process it may hold unreported): %v",
		len(beyond), strings.Join(kinds, "/"), e.holdsExtra(faults.WorkerKill), examples(beyond)))
	r.LostBeyondIDs = examples(beyond)
}

// declaredHit is a fault of a declared kind: when it landed and how many
// held, never-started jobs it may still explain.
type declaredHit struct {
	at     time.Time
	budget int
}

// claimHeld finds the first fault at or after j was due and enqueued with
// room left (within fetchHold of its due time for a job queued due at
// once), and charges j to it.
func claimHeld(hits []*declaredHit, j ledger.LostJob) bool {
	for _, h := range hits {
		if !j.Scheduled && h.at.Sub(j.Due) > fetchHold {
			continue
		}
		if h.budget > 0 && !h.at.Before(j.Due) && !h.at.Before(j.Enq) {
			h.budget--
			return true
		}
	}
	return false
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

// examples is up to ledger.MaxExamples of ids.
func examples(ids []string) []string { return ids[:min(len(ids), ledger.MaxExamples)] }
