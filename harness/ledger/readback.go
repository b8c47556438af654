// The read-back after the drain tells the ledger what the store showed of
// the jobs still open: cut off, unreadable, unconfirmed or lost.

package ledger

import "time"

// NoteReadBack records the read-back after the drain: how many open jobs
// it asked the store about and how long that took, so a report shows
// what reading back a large backlog cost.
func (l *Ledger) NoteReadBack(jobs int, took time.Duration) {
	l.readBackJobs.Store(int64(jobs))
	l.readBackNanos.Store(int64(took))
}

// OutstandingJob is an acknowledged job not yet finished, with its latest
// attempt number.
type OutstandingJob struct {
	ID      string
	Attempt int
	Started bool // a handler start of it was recorded
}

// OutstandingJobs lists the acknowledged jobs not yet finished, for the
// read-back after the drain.
func (l *Ledger) OutstandingJobs() []OutstandingJob {
	var out []OutstandingJob
	l.each(func(id string, e *ledgerEntry) {
		if e.state == enqAcked && !e.done() {
			out = append(out, OutstandingJob{ID: id, Attempt: max(len(e.attempts)-1, 0), Started: e.started()})
		}
	})
	return out
}

// CutOff records that the store still holds id queued or running after
// the drain: the drain ended before it, so it is not called lost.
func (l *Ledger) CutOff(id string) {
	l.update(id, false, func(e *ledgerEntry) { e.cutOff = true })
}

// Unreadable records that the read-back could not read an outstanding
// job's state (a timeout, a driver's error): the job is counted apart,
// never as lost, and the run fails on the read-back, not on a loss.
func (l *Ledger) Unreadable(id string) {
	l.update(id, false, func(e *ledgerEntry) { e.unreadable = true })
}

// Unconfirmed records that the read-back no longer found a started job in
// a store that deletes finished records, and the store's words for it
// (jobstore.FinishedRemover): counted apart, declared, never as lost.
func (l *Ledger) Unconfirmed(id, why string) {
	l.update(id, false, func(e *ledgerEntry) { e.unconfirmed = true })
	l.unconfirmedWhy.Store(&why)
}

// LostState records the store's state of an outstanding job that the
// read-back could not settle.
func (l *Ledger) LostState(id, state string) {
	l.update(id, false, func(e *ledgerEntry) { e.lostState = state })
}

// started says whether a handler start of any attempt was recorded.
func (e *ledgerEntry) started() bool {
	for _, a := range e.attempts {
		if a.starts > 0 {
			return true
		}
	}
	return false
}
