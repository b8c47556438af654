package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Check computes the report. Call it after the drain, when no more events come.
func (l *Ledger) Check() LedgerReport { return l.CheckWith(false) }

// CheckWith is Check; with lostAllowed, lost jobs are counted and listed
// but do not make the report fail (the run's conditions expect them).
func (l *Ledger) CheckWith(lostAllowed bool) LedgerReport { return l.check(lostAllowed, false) }

// CheckSeedVariant is Check for a seed variant's run: lost, duplicated and
// early jobs are what the variant exists to show, so they are reported as
// expected for it (Expected, with the counts), not as a failure. Only a
// store that declares jobstore.CapSeedVariant is checked this way.
func (l *Ledger) CheckSeedVariant() LedgerReport { return l.check(true, true) }

func (l *Ledger) check(lostAllowed, seedVariant bool) LedgerReport {
	var r LedgerReport
	l.each(func(id string, e *ledgerEntry) {
		r.countEntry(id, e)
		r.countUnstarted(id, e, l.caught)
	})
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id := range s.unexpected {
			r.Unexpected++
			r.example(&r.UnexpectedIDs, id)
		}
		s.mu.Unlock()
	}
	r.SettledByReadBack = l.settled.Load()
	r.DuplicatedExecutions = r.DuplicateStarts + r.DuplicateCompletions + r.DuplicateReruns
	for _, ids := range [][]string{r.LostIDs, r.UnfinishedIDs, r.UnexpectedIDs, r.EarlyIDs, r.DuplicateIDs, r.DeadUnstartedIDs} {
		sort.Strings(ids)
	}
	l.judge(&r, lostAllowed, seedVariant)
	r.OK = len(r.Problems) == 0
	return r
}

// example keeps id as an example in list, up to maxExamples.
func (r *LedgerReport) example(list *[]string, id string) {
	if len(*list) < maxExamples {
		*list = append(*list, id)
	}
}

// countEntry adds one job's entry to the report's counts.
func (r *LedgerReport) countEntry(id string, e *ledgerEntry) {
	r.Attempted++
	switch e.state {
	case enqAcked:
		r.Acknowledged++
		switch {
		case e.done():
		case e.cutOff:
			r.UnfinishedAtDrain++
			r.example(&r.UnfinishedIDs, id)
		default:
			r.Lost++
			r.example(&r.LostIDs, id)
			if e.lostState != "" {
				if r.LostStates == nil {
					r.LostStates = map[string]int64{}
				}
				r.LostStates[e.lostState]++
			}
		}
	case enqIndeterminate:
		r.Indeterminate++
	case enqPending:
		// A call still running when the run stopped: treat as indeterminate.
		r.Indeterminate++
	}
	if e.completions > 0 {
		r.Completed++
	} else if e.dead {
		r.DeadLettered++
	} else if e.canceled {
		r.Canceled++
	}
	if e.completions > 1 {
		r.DuplicateCompletions += int64(e.completions - 1)
		r.example(&r.DuplicateIDs, id)
	}
	if e.recoveredAt != 0 {
		r.Recovered++
	}
	r.Fenced += int64(e.fenced)
	for n, a := range e.attempts {
		r.countAttempt(id, e, n, a)
	}
}

// countUnstarted adds a job's attempts that were leased and never run:
// taken back by Recover, dead-lettered, or returned with no handler start
// (LedgerReport.RecoveredUnstarted and the rest). caught (nil: none) says
// whether a fault caught the job in flight, which explains a dead letter.
func (r *LedgerReport) countUnstarted(id string, e *ledgerEntry, caught func(string) bool) {
	for _, a := range e.attempts {
		if a.returned {
			// A return puts back a hand-off no block popped: the attempt
			// had not started then, whatever it did after.
			r.ReturnedUnstarted++
		}
		if a.starts > 0 {
			continue
		}
		if a.recovered {
			r.RecoveredUnstarted++
		}
		if a.lapsed {
			r.DeadUnstarted++
			if caught != nil && caught(id) {
				r.DeadUnstartedExplained++
			} else {
				r.example(&r.DeadUnstartedIDs, id)
			}
		}
	}
}

// countAttempt adds attempt n of a job: its executions, duplicate starts
// and reruns, and an early start.
func (r *LedgerReport) countAttempt(id string, e *ledgerEntry, n int, a attemptRec) {
	r.Executions += int64(a.starts)
	if n > 0 {
		r.Reexecutions += int64(a.starts)
	}
	dup := int64(0)
	if a.starts > 1 {
		dup = int64(a.starts - 1)
	}
	if a.afterDone && dup == 0 {
		dup = 1
	}
	// Judged after the drain, so a Fail whose event reached the ledger
	// after the retry started is still seen.
	if n > 0 && a.starts > 0 && !a.afterDone && e.rerun(n) {
		r.DuplicateReruns++
		r.example(&r.DuplicateIDs, id)
	}
	if dup > 0 {
		r.DuplicateStarts += dup
		r.example(&r.DuplicateIDs, id)
	}
	if a.starts > 0 && a.scheduled && a.due != 0 && a.firstStart < a.due {
		r.StartedEarly++
		r.example(&r.EarlyIDs, id)
		r.MaxEarlyNs = max(r.MaxEarlyNs, a.due-a.firstStart)
	}
}

// judge turns the counts into problems, or into what a seed variant or a
// declared early margin expects.
func (l *Ledger) judge(r *LedgerReport, lostAllowed, seedVariant bool) {
	if r.Lost > 0 && lostAllowed {
		r.LostExpected = true
	} else if r.Lost > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d acknowledged job(s) lost (e.g. %v; store states %s)", r.Lost, r.LostIDs, FormatStates(r.LostStates)))
	}
	if r.Unexpected > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d unexpected job(s) ran that this run never enqueued (e.g. %v)", r.Unexpected, r.UnexpectedIDs))
	}
	if n := r.DeadUnstarted - r.DeadUnstartedExplained; n > 0 && !seedVariant {
		if l.deadUnstartedOK {
			r.Expected = append(r.Expected, fmt.Sprintf("expected (expect.dead_unstarted): %d job(s) dead-lettered on an attempt that never started, no fault caught in flight", n))
		} else {
			r.Problems = append(r.Problems, fmt.Sprintf("%d job(s) dead-lettered on an attempt that never started, and no fault caught them in flight: leased to a claimer that never ran them (e.g. %v)",
				n, r.DeadUnstartedIDs))
		}
	}
	switch {
	case seedVariant:
		r.SeedVariant = true
		if r.Lost > 0 || r.StartedEarly > 0 || r.DuplicatedExecutions > 0 {
			r.Expected = append(r.Expected, fmt.Sprintf("expected for this seed variant: %d lost, %d duplicated (%d duplicate completions), %d started early (worst by %v)",
				r.Lost, r.DuplicatedExecutions, r.DuplicateCompletions, r.StartedEarly, time.Duration(r.MaxEarlyNs)))
		}
	case r.StartedEarly > 0 && l.earlyWhy != "" && time.Duration(r.MaxEarlyNs) <= l.early:
		r.EarlyDeclared = l.earlyWhy
	case r.StartedEarly > 0:
		r.Problems = append(r.Problems, fmt.Sprintf("%d attempt(s) started before their RunAt, worst by %v (e.g. %v)", r.StartedEarly, time.Duration(r.MaxEarlyNs), r.EarlyIDs))
	}
}

// FormatStates writes a count per state, sorted by state: "in_progress 2, not_found 1".
func FormatStates(m map[string]int64) string {
	if len(m) == 0 {
		return "not read"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, ", ")
}
