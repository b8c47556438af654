package ledger

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
)

// Events is how the workers of a run report what happened to each job. An
// in-process worker calls the Ledger directly; a worker process writes the
// same events on its pipe (protocol.go) and the coordinator feeds them to
// the same Ledger. Every method is safe for concurrent use and takes the
// time the event happened, so the ledger never reads a clock itself.
type Events interface {
	// Started: a handler began running attempt `attempt` (Lease.Attempt) of id.
	Started(id string, attempt int, at time.Time) JobTimes
	// Completed: Complete returned nil for that attempt.
	Completed(id string, attempt int, at time.Time) JobTimes
	// Failed: Fail returned res for that attempt (a retry, or a dead letter).
	Failed(id string, attempt int, res jobstore.FailResult, at time.Time)
	// Fenced: Complete, Fail or Extend got ErrLeaseLost for that attempt.
	Fenced(id string, attempt int, at time.Time)
	// Recovered: a Recover call took these jobs back.
	Recovered(res jobstore.RecoverResult, at time.Time)
}

// PlannedJob is what a producer is about to enqueue, registered before the
// call so that a worker that starts the job before the producer hears the
// acknowledgement does not see an unknown id.
type PlannedJob struct {
	ID       string
	Intended time.Time // when the producer's plan said to enqueue it
	RunAt    time.Time // the RunAt asked for; zero for an immediate job
	Measured bool      // intended after the warm-up
}

// JobTimes is what the ledger knows of a job, for the caller's latencies.
type JobTimes struct {
	Known    bool
	Measured bool
	Intended time.Time
	// Due is when this attempt became claimable, when known: the enqueue
	// call's start for an immediate first attempt, RunAt for a delayed one,
	// Fail's retry time or the Recover call's time for later attempts.
	Due time.Time
	// Scheduled: the attempt was due at a RunAt set in advance (a delayed
	// job or a retry after Fail), so its start-minus-Due is lateness.
	Scheduled bool
	Delayed   bool // the job was enqueued with a RunAt in the future
	// Ref is the in-process ledger's entry of the job, set by Started:
	// the worker completes the job through it (Ledger.CompletedAt), one
	// map lookup among every job of the run fewer.
	Ref Ref
}

// Ref is a job's entry and the shard whose lock guards it. Entries
// are never removed during a run, so a ref stays valid.
type Ref struct {
	s *ledgerShard
	e *ledgerEntry
}

// Valid says the ref names an entry (the job started in process).
func (r Ref) Valid() bool { return r.e != nil }

// NoteSettled counts an outcome taken from a read-back of the store.
func (l *Ledger) NoteSettled() { l.settled.Add(1) }

// Ledger checks a run the way Jepsen's total-queue checker does: every job
// acknowledged by Enqueue must be completed or dead-lettered, nothing may
// run that was never enqueued, and no attempt may start before its RunAt.
type Ledger struct {
	seed   maphash.Seed
	shards [64]ledgerShard
	// dense holds the entries of the harness's own ids (ledgerindex.go);
	// the shards' maps hold any other.
	dense denseTable

	acked       atomic.Int64
	outstanding atomic.Int64 // acknowledged, not yet completed or dead
	unexpected  atomic.Int64
	settled     atomic.Int64 // outcomes taken from a read-back of the store
	// readBackJobs and readBackNanos: the read-back after the drain.
	readBackJobs, readBackNanos atomic.Int64
	unconfirmedWhy              atomic.Pointer[string]
	// pending holds the RunAts not yet due (backlog due vs delayed).
	pending pendingRunAts
	// early is how early the store declares it may start a delayed job
	// (AllowEarly); starts within it are reported, not a problem.
	early    time.Duration
	earlyWhy string
	// caught says whether a fault caught a job in flight (SetCaught);
	// deadUnstartedOK: dead letters with no start are expected.
	caught          func(id string) bool
	deadUnstartedOK bool
}

// AllowEarly makes starts up to max before a job's RunAt the documented
// behaviour of the store under test (why): the ledger's check reports them
// with their count instead of failing the run; an earlier start still
// fails it.
func (l *Ledger) AllowEarly(max time.Duration, why string) { l.early, l.earlyWhy = max, why }

// SetCaught gives the check the faults' jobs in flight: a dead letter
// with no start of a job a fault caught is explained by the fault (its
// lease ran out after the kill); with allowed, every such dead letter is
// expected (expect.dead_unstarted). Call it before Check.
func (l *Ledger) SetCaught(caught func(id string) bool, allowed bool) {
	l.caught, l.deadUnstartedOK = caught, allowed
}

type ledgerShard struct {
	mu sync.Mutex
	// m holds the entries of ids outside the dense table.
	m map[string]*ledgerEntry
	// unexpected holds events for ids never planned.
	unexpected map[string]int
	// A shard fills a cache line of its own: consecutive jobs take
	// neighbouring shards, and two workers on two cores would otherwise
	// bounce one line between them on every event.
	_ [64 - 24]byte
}

type enqState uint8

const (
	enqPending       enqState = iota // the Enqueue call has not returned
	enqAcked                         // it returned nil
	enqIndeterminate                 // it returned an error: the jobs may or may not be stored
	enqRefused                       // Redis refused it at maxmemory: the jobs were not stored
)

type ledgerEntry struct {
	intended    int64 // unix ns
	runAt       int64 // unix ns of the asked RunAt; 0 immediate
	callStart   int64 // unix ns the Enqueue call began
	state       enqState
	measured    bool
	completions int32
	dead        bool
	canceled    bool
	// completeRefused: a Complete of the job was refused at maxmemory.
	completeRefused bool
	// cutOff: still queued or running in the store when the drain ended.
	cutOff bool
	// unreadable: the read-back could not read the job's state (Redis or a
	// driver did not answer): neither settled nor lost.
	unreadable bool
	// unconfirmed: started, then not found by the read-back in a store
	// that deletes finished records (jobstore.FinishedRemover): it may have
	// finished, its event cut off; counted apart, neither lost nor done.
	unconfirmed bool
	// lostState: the store's state of a job lost after the read-back
	// (a Status name, or not_found).
	lostState   string
	doneAt      int64
	recoveredAt int64
	fenced      int32
	// retries is the job's RetryCount as the store keeps it, from the
	// retries booked (Fail's, Recover's requeues): the attempt a lease of
	// the job is on, which Recover takes back. Not from starts: a later
	// attempt's start can be booked before the Recover that made it.
	retries  int32
	attempts []attemptRec
}

type attemptRec struct {
	due        int64 // unix ns; 0 unknown
	scheduled  bool
	starts     int32
	firstStart int64
	afterDone  bool // started after the job was completed or dead-lettered
	// failed: Fail returned for this attempt, so the next attempt is a
	// retry by design, not a re-run of lost work.
	failed bool
	// recovered: Recover took this attempt's expired lease back, spending
	// it; lapsed: Recover dead-lettered the job on it; returned: Recover
	// put its untouched hand-off back without spending it. Each with no
	// start of the attempt is a job leased and never run (Check).
	recovered, lapsed, returned bool
}

// New returns an empty ledger.
func New() *Ledger {
	l := &Ledger{seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].m = map[string]*ledgerEntry{}
	}
	return l
}

func (l *Ledger) shard(id string) *ledgerShard {
	return &l.shards[maphash.String(l.seed, id)%uint64(len(l.shards))]
}

// entryBlock holds an entry and room for its first attempt in one
// allocation: every job has a first attempt, and the start of a job reads
// it beside the entry instead of behind another pointer (a run's ledger
// holds every job of the run, hundreds of thousands with a prefill).
type entryBlock struct {
	e     ledgerEntry
	first [1]attemptRec
}

// reset makes b a new entry (a planned one: its attempts slice is set).
func (b *entryBlock) reset() *ledgerEntry {
	*b = entryBlock{}
	b.e.attempts = b.first[:0:1]
	return &b.e
}

func (e *ledgerEntry) attempt(n int) *attemptRec {
	if n < 0 {
		n = 0
	}
	for len(e.attempts) <= n {
		e.attempts = append(e.attempts, attemptRec{})
	}
	return &e.attempts[n]
}

// rerun: attempt n is a re-run of work done or in progress, because an
// earlier attempt started its handler and did not end by Fail.
func (e *ledgerEntry) rerun(n int) bool {
	for k := 0; k < n && k < len(e.attempts); k++ {
		if p := e.attempts[k]; p.starts > 0 && !p.failed {
			return true
		}
	}
	return false
}

func (e *ledgerEntry) done() bool { return e.completions > 0 || e.dead || e.canceled }

// Planned registers jobs before the Enqueue call that carries them, which
// starts at callStart.
func (l *Ledger) Planned(jobs []PlannedJob, callStart time.Time) {
	for _, j := range jobs {
		var b *entryBlock
		var s *ledgerShard
		if k, ok := harnessKey(j.ID); ok {
			b, s = l.dense.slot(k, true), k.shard(l)
		}
		inMap := b == nil
		if inMap {
			b, s = &entryBlock{}, l.shard(j.ID)
		}
		s.mu.Lock()
		e := b.reset()
		e.intended, e.callStart, e.measured = j.Intended.UnixNano(), callStart.UnixNano(), j.Measured
		a := e.attempt(0)
		if j.RunAt.IsZero() {
			a.due = e.callStart
		} else {
			e.runAt = j.RunAt.UnixNano()
			a.due, a.scheduled = e.runAt, true
		}
		if inMap {
			s.m[j.ID] = e
		}
		s.mu.Unlock()
	}
}

// update runs f on id's entry under its shard's lock. An id the ledger
// never planned is skipped, and counted as unexpected when strict (a worker
// saw it: the store made it up).
func (l *Ledger) update(id string, strict bool, f func(e *ledgerEntry)) {
	s, b := l.locate(id)
	l.updateIn(s, b, id, strict, f)
}

// updateIn is update on id's shard s and dense slot b (locate).
func (l *Ledger) updateIn(s *ledgerShard, b *entryBlock, id string, strict bool, f func(e *ledgerEntry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryAt(b, id)
	if e == nil {
		if strict {
			s.noteUnexpected(l, id)
		}
		return
	}
	f(e)
}

// Acked records that the Enqueue call for ids returned nil.
func (l *Ledger) Acked(ids []string) {
	now := time.Now().UnixNano()
	for _, id := range ids {
		l.update(id, false, func(e *ledgerEntry) {
			if e.state == enqPending {
				e.state = enqAcked
				l.acked.Add(1)
				if !e.done() {
					l.outstanding.Add(1)
					l.pending.add(e.runAt, now)
				}
			}
		})
	}
}

// Delayed is how many acknowledged jobs and retries wait for a RunAt after
// now: the part of the backlog that is not due.
func (l *Ledger) Delayed(now time.Time) int64 { return l.pending.delayedAt(now) }

// EnqueueFailed records that the Enqueue call for ids returned an error: the
// jobs may still be in the store (a timeout after Redis applied them), so
// they are neither lost if they never run nor unexpected if they do.
func (l *Ledger) EnqueueFailed(ids []string) {
	for _, id := range ids {
		l.update(id, false, func(e *ledgerEntry) {
			if e.state == enqPending {
				e.state = enqIndeterminate
			}
		})
	}
}

// EnqueueRefused records that Redis refused the Enqueue call for ids at
// maxmemory (rclient.IsOOM): nothing was written, so the jobs are
// refused, neither acknowledged nor indeterminate.
func (l *Ledger) EnqueueRefused(ids []string) {
	for _, id := range ids {
		l.update(id, false, func(e *ledgerEntry) {
			if e.state == enqPending {
				e.state = enqRefused
			}
		})
	}
}

// CompleteRefused records that Redis refused a Complete of id at
// maxmemory: the job stays leased, and Check says whether it was
// completed later (retried after its lease lapsed) or not.
func (l *Ledger) CompleteRefused(id string) {
	l.update(id, false, func(e *ledgerEntry) { e.completeRefused = true })
}

// AckedOpenAt counts the acknowledged jobs whose Enqueue call started in
// (from, to] and that had not finished at open (open: completed and
// dead-lettered jobs finished before it do not count).
func (l *Ledger) AckedOpenAt(from, to, open time.Time) int64 {
	var n int64
	lo, hi, at := from.UnixNano(), to.UnixNano(), open.UnixNano()
	l.each(func(_ string, e *ledgerEntry) {
		if e.state == enqAcked && e.callStart > lo && e.callStart <= hi && (e.doneAt == 0 || e.doneAt > at) {
			n++
		}
	})
	return n
}

// Outstanding is the count of acknowledged jobs not yet completed or dead-lettered.
func (l *Ledger) Outstanding() int64 { return l.outstanding.Load() }

// AckedCount is the count of acknowledged jobs.
func (l *Ledger) AckedCount() int64 { return l.acked.Load() }

func (l *Ledger) markDone(e *ledgerEntry, at int64) {
	if e.done() {
		return
	}
	e.doneAt = at
	if e.state == enqAcked {
		l.outstanding.Add(-1)
	}
}

func (s *ledgerShard) noteUnexpected(l *Ledger, id string) {
	if s.unexpected == nil {
		s.unexpected = map[string]int{}
	}
	if s.unexpected[id] == 0 {
		l.unexpected.Add(1)
	}
	s.unexpected[id]++
}

func (e *ledgerEntry) times() JobTimes {
	return JobTimes{Known: true, Measured: e.measured, Intended: time.Unix(0, e.intended), Delayed: e.runAt != 0}
}

// Started implements Events.
func (l *Ledger) Started(id string, attempt int, at time.Time) JobTimes {
	var t JobTimes
	s, b := l.locate(id)
	l.updateIn(s, b, id, true, func(e *ledgerEntry) {
		a := e.attempt(attempt)
		a.starts++
		if a.starts == 1 {
			a.firstStart = at.UnixNano()
		}
		if e.done() {
			a.afterDone = true
		}
		t = e.times()
		if a.due != 0 {
			t.Due, t.Scheduled = time.Unix(0, a.due), a.scheduled
		} else if attempt > 0 && e.recoveredAt != 0 {
			t.Due = time.Unix(0, e.recoveredAt)
		}
		t.Ref = Ref{s: s, e: e}
	})
	return t
}

// Completed implements Events.
func (l *Ledger) Completed(id string, attempt int, at time.Time) JobTimes {
	var t JobTimes
	l.update(id, true, func(e *ledgerEntry) { t = l.complete(e, at) })
	return t
}

// CompletedAt is Completed of the job whose entry Started returned in r.
func (l *Ledger) CompletedAt(r Ref, at time.Time) JobTimes {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return l.complete(r.e, at)
}

func (l *Ledger) complete(e *ledgerEntry, at time.Time) JobTimes {
	l.markDone(e, at.UnixNano())
	e.completions++
	return e.times()
}

// Failed implements Events.
func (l *Ledger) Failed(id string, attempt int, res jobstore.FailResult, at time.Time) {
	l.update(id, true, func(e *ledgerEntry) {
		e.attempt(attempt).failed = true
		switch res.Status {
		case jobstore.StatusFailed:
			l.markDone(e, at.UnixNano())
			e.dead = true
		default:
			e.retries = max(e.retries, int32(attempt+1))
			next := e.attempt(attempt + 1)
			next.due, next.scheduled = res.RunAt.UnixNano(), true
			l.pending.add(next.due, at.UnixNano())
		}
	})
}

// Fenced implements Events.
func (l *Ledger) Fenced(id string, _ int, _ time.Time) {
	l.update(id, false, func(e *ledgerEntry) { e.fenced++ })
}

// Recovered implements Events. Each job taken back is booked on the
// attempt its lease was on (ledgerEntry.retries).
func (l *Ledger) Recovered(res jobstore.RecoverResult, at time.Time) {
	for _, id := range res.Requeued {
		l.update(id, true, func(e *ledgerEntry) {
			e.recoveredAt = at.UnixNano()
			e.attempt(int(e.retries)).recovered = true
			e.retries++
		})
	}
	for _, id := range res.DeadLettered {
		l.update(id, true, func(e *ledgerEntry) {
			l.markDone(e, at.UnixNano())
			e.dead = true
			e.attempt(int(e.retries)).lapsed = true
		})
	}
	for _, id := range res.Returned {
		l.update(id, true, func(e *ledgerEntry) { e.attempt(int(e.retries)).returned = true })
	}
}

// Canceled records that the store shows id canceled (found by a read-back).
func (l *Ledger) Canceled(id string, at time.Time) {
	l.update(id, true, func(e *ledgerEntry) {
		l.markDone(e, at.UnixNano())
		e.canceled = true
	})
}

// LostJob is a lost job as the ledger knows it, for judgeDeclaredLoss.
type LostJob struct {
	ID      string
	Due     time.Time // when it became due: its RunAt, else its enqueue
	Enq     time.Time // when its Enqueue call began
	Started bool      // some attempt's handler started
	// Scheduled: a delayed job or a retry, which a system's scheduler
	// moves when due (Sidekiq's poller); else it was queued due at once.
	Scheduled bool
}

// LostJobs lists every lost job (Outcome's Lost), for the declared-loss
// judgement.
func (l *Ledger) LostJobs() []LostJob {
	var out []LostJob
	l.each(func(id string, e *ledgerEntry) {
		if !e.lost() {
			return
		}
		j := LostJob{ID: id, Enq: time.Unix(0, e.callStart), Due: time.Unix(0, max(e.runAt, e.callStart)),
			Scheduled: e.runAt != 0 || len(e.attempts) > 1}
		for _, a := range e.attempts {
			j.Started = j.Started || a.starts > 0
		}
		out = append(out, j)
	})
	return out
}

// DeadUnstarted lists up to max jobs dead-lettered on an attempt that
// never started.
func (l *Ledger) DeadUnstarted(max int) []string {
	var out []string
	l.each(func(id string, e *ledgerEntry) {
		if len(out) < max && e.dead {
			if dead, _ := e.unstarted(); dead {
				out = append(out, id)
			}
		}
	})
	return out
}

// lost: acknowledged, neither finished nor left in the store by the
// drain's end.
func (e *ledgerEntry) lost() bool {
	return e.state == enqAcked && !e.done() && !e.cutOff && !e.unreadable && !e.unconfirmed
}

// unstarted says whether an attempt of the job that never started was
// dead-lettered (dead) or taken back by Recover (recovered).
func (e *ledgerEntry) unstarted() (dead, recovered bool) {
	for _, a := range e.attempts {
		if a.starts == 0 {
			dead = dead || a.lapsed
			recovered = recovered || a.recovered
		}
	}
	return dead, recovered
}

// IsLost reports whether id was acknowledged and is neither completed nor dead-lettered.
func (l *Ledger) IsLost(id string) bool { return l.Outcome(id).Lost }

// Outcome is what the ledger holds of id for the fault tracker: lost, and
// whether an attempt that never started was dead-lettered or taken back.
func (l *Ledger) Outcome(id string) faults.Outcome {
	var o faults.Outcome
	l.update(id, false, func(e *ledgerEntry) {
		o.Lost = e.lost()
		o.DeadUnstarted, o.RecoveredUnstarted = e.unstarted()
	})
	return o
}

// IntendedAt is when job id was planned to be enqueued (false for an id
// the ledger does not hold).
func (l *Ledger) IntendedAt(id string) (time.Time, bool) {
	var at int64
	l.update(id, false, func(e *ledgerEntry) { at = e.intended })
	return time.Unix(0, at), at != 0
}
