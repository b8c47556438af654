package ledger

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Report is the verdict on a run's jobs after the drain.
type Report struct {
	Attempted    int64 `json:"attempted"`
	Acknowledged int64 `json:"acknowledged"`
	// Indeterminate: the Enqueue call failed, so the jobs may or may not exist.
	Indeterminate int64 `json:"indeterminate"`
	// Refused: Redis refused the Enqueue call at maxmemory (an OOM reply
	// under noeviction): not stored, not acknowledged, not lost.
	Refused int64 `json:"refused,omitempty"`
	// CompleteRefused: jobs a Complete of which Redis refused at
	// maxmemory; CompleteRefusedRetried of them completed later (the lease
	// lapsed, Recover took the job back and it ran again: a duplicated
	// execution), the rest did not (stuck: unfinished or lost).
	CompleteRefused        int64 `json:"complete_refused,omitempty"`
	CompleteRefusedRetried int64 `json:"complete_refused_retried,omitempty"`
	Completed              int64 `json:"completed"`
	DeadLettered           int64 `json:"dead_lettered"`
	// Canceled: the store shows the job canceled.
	Canceled int64 `json:"canceled"`
	// SettledByReadBack: outcomes the events never brought (a worker process
	// killed after its Complete, a reply lost on a reset connection, an
	// event cut off by the drain) and a read-back of the job's record did;
	// they are counted in Completed, DeadLettered or Canceled too.
	SettledByReadBack int64 `json:"settled_by_read_back"`
	// ReadBackJobs and ReadBackMS: the open jobs the read-back after the
	// drain asked the store about, and how long it took.
	ReadBackJobs int64   `json:"read_back_jobs,omitempty"`
	ReadBackMS   float64 `json:"read_back_ms,omitempty"`
	// UnfinishedAtDrain: acknowledged jobs the store still held queued or
	// running when the drain ended; cut off by the drain, not lost.
	UnfinishedAtDrain int64 `json:"unfinished_at_drain"`
	// UnfinishedLater: some of them the system under test takes back
	// itself, later than the run waited, and why (jobstore.Location.Later).
	UnfinishedLater string `json:"unfinished_later,omitempty"`
	// Lost: acknowledged, neither finished nor still queued or running in
	// the store after the drain (read back before it is called lost).
	Lost int64 `json:"lost"`
	// Unreadable: acknowledged jobs whose state the read-back could not
	// read (Redis or a driver did not answer in time, or answered an
	// error): not known lost, not known finished. The run fails on the
	// read-back, and they are never counted in Lost.
	Unreadable    int64    `json:"unreadable"`
	UnreadableIDs []string `json:"unreadable_ids,omitempty"`
	// Unconfirmed: started jobs the read-back no longer found in a store
	// that deletes finished records (a peer in peer_mode native,
	// jobstore.FinishedRemover): they may have finished with their events
	// cut off. Declared in UnconfirmedWhy, the store's words; never lost.
	Unconfirmed    int64    `json:"unconfirmed,omitempty"`
	UnconfirmedIDs []string `json:"unconfirmed_ids,omitempty"`
	UnconfirmedWhy string   `json:"unconfirmed_why,omitempty"`
	// LostStates counts lost jobs by the state the read-back found: a
	// Status name, or not_found.
	LostStates map[string]int64 `json:"lost_states,omitempty"`
	// LostCauses counts lost jobs by what made them vanish (AttributeLost:
	// evicted, redis_restart, unreadable, store).
	LostCauses map[string]int64 `json:"lost_causes,omitempty"`
	// Unexpected: started or completed, but never enqueued by this run.
	Unexpected int64 `json:"unexpected"`
	// DuplicateStarts: handler starts beyond one per (job, attempt), plus
	// starts after the job had already completed or been dead-lettered.
	DuplicateStarts int64 `json:"duplicate_starts"`
	// DuplicateCompletions: successful Complete calls beyond one per job.
	DuplicateCompletions int64 `json:"duplicate_completions"`
	// DuplicateReruns: starts of a later attempt while an earlier attempt
	// of the job had started its handler and did not end by Fail: the work
	// was done, or is still running, and runs again (a lease that lapsed
	// on a long job, a worker that crashed in or after its handler).
	DuplicateReruns int64 `json:"duplicate_reruns"`
	// DuplicatedExecutions = DuplicateStarts + DuplicateCompletions + DuplicateReruns.
	DuplicatedExecutions int64 `json:"duplicated_executions"`
	// LostExpected: lost jobs were expected under the run's conditions
	// (expect.lost), so they are reported, not a failure.
	LostExpected bool `json:"lost_expected,omitempty"`
	// LostDeclared: the lost jobs are the documented behaviour of the
	// system under test under this run's faults (jobstore.LossDeclarer),
	// in its driver's words. LostDeclaredJobs counts the lost jobs the
	// declaration covers, judged job by job; LostBeyondIDs names lost jobs
	// it does not cover, which fail the run. Of the covered, LostHeldJobs
	// were not in flight at a fault but held, never started, by a process
	// it killed: at most LostHeldAllowed (the declared holds_extra of every
	// fault of a declared kind).
	LostDeclared     string   `json:"lost_declared,omitempty"`
	LostDeclaredJobs int64    `json:"lost_declared_jobs,omitempty"`
	LostHeldJobs     int64    `json:"lost_held_jobs,omitempty"`
	LostHeldAllowed  int64    `json:"lost_held_allowed,omitempty"`
	LostBeyondIDs    []string `json:"lost_beyond_ids,omitempty"`
	// EarlyDeclared: the early starts are within what the system under test
	// declares (jobstore.EarlyDeclarer), in its driver's words.
	EarlyDeclared string `json:"early_declared,omitempty"`
	// SeedVariant: the store is a seed variant (jobstore.CapSeedVariant),
	// which reproduces a seed's flaw on purpose: its lost and early jobs
	// are listed in Expected with their counts, not as problems (an
	// unexpected job still is one).
	SeedVariant bool     `json:"seed_variant,omitempty"`
	Expected    []string `json:"expected,omitempty"`
	// StartedEarly: attempts whose handler started before the RunAt asked for
	// (the producer's, or Fail's retry time); MaxEarlyNs is the worst.
	StartedEarly int64 `json:"started_early"`
	MaxEarlyNs   int64 `json:"max_early_ns"`
	// Executions counts handler starts; Reexecutions those of attempts > 0.
	Executions   int64 `json:"executions"`
	Reexecutions int64 `json:"reexecutions"`
	// Recovered counts jobs a Recover call took back at least once.
	Recovered int64 `json:"recovered"`
	// Jobs leased and never run, by what became of the lease: an attempt
	// that Recover took back expired with no start of its handler
	// (RecoveredUnstarted: the attempt was spent on nothing), the job
	// dead-lettered so (DeadUnstarted), or an untouched hand-off returned
	// without spending an attempt (ReturnedUnstarted: handed to a claimer
	// that died registered). A dead letter with no start fails the run
	// unless a fault caught the job in flight or expect.dead_unstarted
	// allows it (DeadUnstartedExplained counts those a fault explains).
	RecoveredUnstarted     int64    `json:"recovered_unstarted"`
	DeadUnstarted          int64    `json:"dead_unstarted"`
	DeadUnstartedExplained int64    `json:"dead_unstarted_explained,omitempty"`
	ReturnedUnstarted      int64    `json:"returned_unstarted"`
	DeadUnstartedIDs       []string `json:"dead_unstarted_ids,omitempty"`
	// DeadUnstartedLeases: of those no fault explains, each one's last
	// lease as its record keeps it (worker, and when it began), for the
	// reader to match against the workers' faults and stalls.
	DeadUnstartedLeases []string `json:"dead_unstarted_leases,omitempty"`
	// Fenced counts calls refused with ErrLeaseLost.
	Fenced int64 `json:"fenced"`
	// Examples lists up to 10 ids per problem.
	LostIDs       []string `json:"lost_ids,omitempty"`
	UnfinishedIDs []string `json:"unfinished_ids,omitempty"`
	UnexpectedIDs []string `json:"unexpected_ids,omitempty"`
	EarlyIDs      []string `json:"early_ids,omitempty"`
	DuplicateIDs  []string `json:"duplicate_ids,omitempty"`
	// OK is false when any job was lost or unexpected or started early.
	OK       bool     `json:"ok"`
	Problems []string `json:"problems,omitempty"`
}

const MaxExamples = 10

// Check computes the report. Call it after the drain, when no more events come.
func (l *Ledger) Check() Report { return l.CheckWith(false) }

// CheckWith is Check; with lostAllowed, lost jobs are counted and listed
// but do not make the report fail (the run's conditions expect them).
func (l *Ledger) CheckWith(lostAllowed bool) Report { return l.check(lostAllowed, false) }

// CheckSeedVariant is Check for a seed variant's run: lost, duplicated and
// early jobs are what the variant exists to show, so they are reported as
// expected for it (Expected, with the counts), not as a failure. Only a
// store that declares jobstore.CapSeedVariant is checked this way.
func (l *Ledger) CheckSeedVariant() Report { return l.check(true, true) }

func (l *Ledger) check(lostAllowed, seedVariant bool) Report {
	var r Report
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
	r.ReadBackJobs = l.readBackJobs.Load()
	r.ReadBackMS = float64(l.readBackNanos.Load()) / 1e6
	if why := l.unconfirmedWhy.Load(); why != nil && r.Unconfirmed > 0 {
		r.UnconfirmedWhy = *why
	}
	r.DuplicatedExecutions = r.DuplicateStarts + r.DuplicateCompletions + r.DuplicateReruns
	for _, ids := range [][]string{r.LostIDs, r.UnfinishedIDs, r.UnreadableIDs, r.UnconfirmedIDs, r.UnexpectedIDs, r.EarlyIDs, r.DuplicateIDs, r.DeadUnstartedIDs} {
		sort.Strings(ids)
	}
	l.judge(&r, lostAllowed, seedVariant)
	r.OK = len(r.Problems) == 0
	return r
}

// example keeps id as an example in list, up to MaxExamples.
func (r *Report) example(list *[]string, id string) {
	if len(*list) < MaxExamples {
		*list = append(*list, id)
	}
}

// countEntry adds one job's entry to the report's counts.
func (r *Report) countEntry(id string, e *ledgerEntry) {
	r.Attempted++
	switch e.state {
	case enqAcked:
		r.Acknowledged++
		switch {
		case e.done():
		case e.cutOff:
			r.UnfinishedAtDrain++
			r.example(&r.UnfinishedIDs, id)
		case e.unreadable:
			r.Unreadable++
			r.example(&r.UnreadableIDs, id)
		case e.unconfirmed:
			r.Unconfirmed++
			r.example(&r.UnconfirmedIDs, id)
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
	case enqRefused:
		r.Refused++
	case enqPending:
		// A call still running when the run stopped: treat as indeterminate.
		r.Indeterminate++
	}
	if e.completeRefused {
		r.CompleteRefused++
		if e.completions > 0 {
			r.CompleteRefusedRetried++
		}
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
// (Report.RecoveredUnstarted and the rest). caught (nil: none) says
// whether a fault caught the job in flight, which explains a dead letter.
func (r *Report) countUnstarted(id string, e *ledgerEntry, caught func(string) bool) {
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
func (r *Report) countAttempt(id string, e *ledgerEntry, n int, a attemptRec) {
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
func (l *Ledger) judge(r *Report, lostAllowed, seedVariant bool) {
	if r.Lost > 0 && lostAllowed {
		r.LostExpected = true
	} else if r.Lost > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d acknowledged job(s) lost (e.g. %v; store states %s)", r.Lost, r.LostIDs, FormatStates(r.LostStates)))
	}
	if r.Unreadable > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the read-back failed: %d acknowledged job(s) unreadable (e.g. %v): their state could not be read, so they are counted neither lost nor finished",
			r.Unreadable, r.UnreadableIDs))
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

// Tally is a stretch of a run's jobs judged as Check judges them all.
type Tally struct {
	Acknowledged int64 `json:"acknowledged"`
	Lost         int64 `json:"lost"`
	Duplicated   int64 `json:"duplicated_executions"`
	StartedEarly int64 `json:"started_early"`
}

// Tallies splits the jobs by intended time at edges (unix ns, ascending):
// tally i holds the jobs intended in [edges[i], edges[i+1]); jobs before
// the first edge or after the last are in none. A run's phases are
// judged this way, with the counting Check uses.
func (l *Ledger) Tallies(edges []int64) []Tally {
	if len(edges) < 2 {
		return nil
	}
	reps := make([]Report, len(edges)-1)
	l.each(func(id string, e *ledgerEntry) {
		i := sort.Search(len(edges), func(i int) bool { return edges[i] > e.intended }) - 1
		if i < 0 || i >= len(reps) {
			return
		}
		reps[i].countEntry(id, e)
	})
	out := make([]Tally, len(reps))
	for i, r := range reps {
		out[i] = Tally{Acknowledged: r.Acknowledged, Lost: r.Lost, StartedEarly: r.StartedEarly,
			Duplicated: r.DuplicateStarts + r.DuplicateCompletions + r.DuplicateReruns}
	}
	return out
}
