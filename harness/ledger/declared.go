package ledger

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
)

// Declared is what a system under test declares it loses under faults
// (jobstore.LossDeclarer): why, under which fault kinds, and how many
// jobs a fault of a kind may leave held and unreported
// (jobstore.HoldDeclarer; 0 for none).
type Declared struct {
	Why   string
	Kinds []string
	Holds func(k faults.Kind) int
}

// fetchHold bounds how long before a fault a job queued due at once may
// have become due and still be held unreported by the process the fault
// killed: a free worker fetches a due job at once and reports its start
// within milliseconds, so a job due longer before was either run or never
// fetched. A scheduled job may wait for the system's scheduler pass, so
// only "due by then" bounds it.
const fetchHold = time.Second

// JudgeDeclaredLoss decides, job by job, which lost jobs the system's
// declaration (why, under the fault kinds it names) covers: each that a
// fault of those kinds caught in flight, and up to HoldsExtra
// (Declared.Holds) per process such a fault hit of jobs never
// started, enqueued before the fault and due by then (a job queued due at
// once: within fetchHold), the latest due job first and the earliest
// fault after each first. Every other lost job fails the run, named: a
// job the driver acknowledged and never stored is not made good by a kill
// seconds later.
func (l *Ledger) JudgeDeclaredLoss(r *Report, d Declared, sum faults.Summary) {
	if r.Lost == 0 {
		return
	}
	r.LostDeclared = d.Why
	kinds := d.Kinds
	var hits []*declaredHit
	caught := map[string]bool{}
	for _, rec := range sum.Records {
		if rec.Skipped != "" || !slices.Contains(kinds, string(rec.Kind)) {
			continue
		}
		for _, id := range rec.JobIDs() {
			caught[id] = true
		}
		hits = append(hits, &declaredHit{at: rec.Time(), budget: d.Holds(rec.Kind)})
		r.LostHeldAllowed += int64(d.Holds(rec.Kind))
	}
	// Latest due first: a process fetches in due order, so the jobs it held
	// unreported are the last it fetched; and the order is the same every
	// time the same ledger is judged (the ledger's own is a map's).
	lost := l.LostJobs()
	slices.SortFunc(lost, func(a, b LostJob) int {
		if c := b.Due.Compare(a.Due); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var beyond []string
	for _, j := range lost {
		if caught[j.ID] {
			r.LostDeclaredJobs++
			continue
		}
		if !j.Started && claimHeld(hits, j) {
			r.LostDeclaredJobs++
			r.LostHeldJobs++
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
		len(beyond), strings.Join(kinds, "/"), d.Holds(faults.WorkerKill), examples(beyond)))
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
func claimHeld(hits []*declaredHit, j LostJob) bool {
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

// examples is up to MaxExamples of ids.
func examples(ids []string) []string { return ids[:min(len(ids), MaxExamples)] }
