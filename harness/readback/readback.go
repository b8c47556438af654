// Package readback settles the ledger against the store when a job's
// events were cut off, as Jepsen's checkers end with a final read: a
// worker process killed between its Complete and the event reaching the
// coordinator, a Complete or Fail whose reply was lost, the jobs still
// open when the drain ends. The store's record decides, and the ledger is
// told; what the store shows open is placed (jobstore.Locator) as cut off
// by the drain, taken back later by the system, or lost in no queue.
package readback

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// Reader reads back a run's jobs from its store into its ledger.
type Reader struct {
	Store  jobstore.Store
	Ledger *ledger.Ledger
	// Completed, Dead and AckLost count what the read-back settled (the
	// run's counters); NoteErr takes a read-back's failure.
	Completed, Dead, AckLost func()
	NoteErr                  func(error)

	resolvers sync.WaitGroup
	// later: the read-back found open jobs the system takes back itself
	// later than the run waits (jobstore.Location.Later), in its words.
	later string
}

// Later is why open jobs the system takes back itself later than the run
// waits were not lost (jobstore.Location.Later), or "".
func (r *Reader) Later() string { return r.later }

// Wait waits for every ResolveUnknown under way.
func (r *Reader) Wait() { r.resolvers.Wait() }

// Result is what a read-back of a job's record found.
type Result struct {
	Rec     jobstore.Job
	Err     error // from store.Get; nil when the record was read
	Settled bool  // the record showed the job finished and the ledger was told
}

// Settle is the one read-back that settles a job whose events were cut
// off: a worker process killed between its Complete and the event reaching
// the coordinator, a Complete or Fail whose reply was lost, a job still
// outstanding when the drain ended. As Jepsen's checkers do with a final
// read, the store's record decides: Completed -> completed, Failed ->
// dead-lettered, Canceled -> canceled, and the ledger is told. With a
// token, only a record finished under that claim counts: a record
// finished under another claim was finished by a worker that reports it
// itself. Without a token (after the drain) any finished record counts.
func (e *Reader) Settle(ctx context.Context, id string, attempt int, token string, at time.Time) Result {
	j, err := e.Store.Get(ctx, id)
	if err != nil {
		return Result{Err: err}
	}
	rb := Result{Rec: j}
	if token != "" && j.LeaseToken != token {
		return rb
	}
	switch j.Status {
	case jobstore.StatusCompleted:
		e.Ledger.Completed(id, attempt, at)
		e.Completed()
	case jobstore.StatusFailed:
		e.Ledger.Failed(id, attempt, jobstore.FailResult{Status: jobstore.StatusFailed}, at)
		e.Dead()
	case jobstore.StatusCanceled:
		e.Ledger.Canceled(id, at)
	default:
		return rb
	}
	e.Ledger.NoteSettled()
	rb.Settled = true
	return rb
}

// ResolveUnknown settles a job whose Complete or Fail outcome is unknown;
// it retries while Redis is unreachable, for up to resolveFor. One still
// held under the token was not finished by that call: the recoverer takes
// it back when the lease expires.
func (e *Reader) ResolveUnknown(id string, attempt int, token string, at time.Time) {
	e.resolvers.Add(1)
	go func() {
		defer e.resolvers.Done()
		deadline := time.Now().Add(resolveFor)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			rb := e.Settle(ctx, id, attempt, token, at)
			cancel()
			if rb.Settled {
				e.AckLost()
			}
			if rb.Err == nil || errors.Is(rb.Err, jobstore.ErrNotFound) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// resolveFor bounds the read-back of an unknown outcome.
const resolveFor = 20 * time.Second

// SettleFor bounds the read-back after the drain: a Redis that is down
// leaves the rest unread, reported lost as unreadable.
const SettleFor = 15 * time.Second

// Outstanding reads back every acknowledged job the ledger still
// holds open after the drain, before the ledger's check: a job the store
// shows finished is settled, one still queued or running where the store
// will reach it was cut off by the drain, and only the rest is lost, with
// the state the store showed. A store that implements jobstore.Locator
// says for every open job, in batches and however many there are, whether
// its record sits in an index its claims, movers or recovery read: an open
// record in none is lost ("<Status>_in_no_queue") whatever the backlog
// beside it. Without one, an open record counts as lost only while the
// store's exact Stats hold no job at all.
func (e *Reader) Outstanding() {
	jobs := e.Ledger.OutstandingJobs()
	if len(jobs) == 0 {
		return
	}
	start := time.Now()
	defer func() { e.Ledger.NoteReadBack(len(jobs), time.Since(start)) }()
	ctx, cancel := context.WithTimeout(context.Background(), SettleFor)
	defer cancel()
	if loc, ok := e.Store.(jobstore.Locator); ok {
		if e.settleLocated(loc, jobs) {
			return
		}
	}
	e.settleByStats(ctx, jobs)
}

// settleLocated settles jobs with the store's Locate: false when Locate
// failed before it placed any job (the caller falls back to Stats).
func (e *Reader) settleLocated(loc jobstore.Locator, jobs []ledger.OutstandingJob) bool {
	at := time.Now()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	locs, err := locateAll(loc, ids)
	if err != nil && !errors.Is(err, jobstore.ErrUnsupported) {
		e.NoteErr(fmt.Errorf("read-back: locate: %w", err))
	}
	if len(locs) == 0 && err != nil {
		return false
	}
	for i, j := range jobs {
		if i >= len(locs) {
			e.Ledger.Unreadable(j.ID) // Locate broke off: Redis or the driver did not answer
			continue
		}
		l := locs[i]
		switch {
		case !l.Found:
			e.notFound(j)
		case !isOpen(l.Status):
			// Its own time to answer: a long Locate of a large backlog
			// may have spent the read-back's.
			gctx, gcancel := context.WithTimeout(context.Background(), 2*time.Second)
			rb := e.Settle(gctx, j.ID, j.Attempt, "", at)
			gcancel()
			switch {
			case rb.Settled:
			case rb.Err != nil && !errors.Is(rb.Err, jobstore.ErrNotFound):
				e.Ledger.Unreadable(j.ID) // located finished, then its record could not be read
				e.NoteErr(fmt.Errorf("read-back: get %s: %w", j.ID, rb.Err))
			default:
				e.Ledger.LostState(j.ID, l.Status.String())
			}
		case l.Reachable:
			e.Ledger.CutOff(j.ID)
		case l.Later != "":
			e.Ledger.CutOff(j.ID)
			e.later = l.Later
		default:
			e.Ledger.LostState(j.ID, l.Status.String()+"_in_no_queue")
		}
	}
	return true
}

// quietReadBack bounds the drain's read-back of open jobs: above it the
// drain waits out its time instead (a backlog far beyond what a read-back
// can afford each second).
const quietReadBack = 10000

// Finished is the drain's read-back: every open job the store shows
// finished is settled, so a job whose completion event never reached the
// ledger does not hold the drain to its end. Open jobs stay open; only the
// final read-back calls a job lost. It reports whether the drain may end
// now: every job still open is one that nothing will run (in no queue, not
// found: lost, or a loss the system declares) or that the system takes
// back itself later than the run waits (Location.Later). Waiting longer
// changes neither, and a declared loss must not hold the drain to its end.
func (e *Reader) Finished() (over bool) {
	jobs := e.Ledger.OutstandingJobs()
	if len(jobs) == 0 || len(jobs) > quietReadBack {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), SettleFor)
	defer cancel()
	at := time.Now()
	if loc, ok := e.Store.(jobstore.Locator); ok {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		locs, err := locateAll(loc, ids)
		if err != nil {
			return false
		}
		over = true
		for i, l := range locs {
			if l.Found && !isOpen(l.Status) {
				if !e.Settle(ctx, jobs[i].ID, jobs[i].Attempt, "", at).Settled {
					over = false
				}
				continue
			}
			if l.Reachable {
				over = false
			}
		}
		return over
	}
	for _, j := range jobs[:min(len(jobs), quietReadBack/10)] {
		gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
		e.Settle(gctx, j.ID, j.Attempt, "", at)
		gcancel()
	}
	return false
}

// locateChunk is how many ids one Locate call of the read-back asks about,
// each call with locateFor to answer: a backlog of a million is read back
// whole, chunk by chunk, and a Redis that stops answering ends it at the
// first chunk that fails (the rest are unreadable).
const (
	locateChunk = 20000
	locateFor   = 10 * time.Second
)

// locateAll locates ids chunk by chunk; on an error it returns the
// locations found so far and the error.
func locateAll(loc jobstore.Locator, ids []string) ([]jobstore.Location, error) {
	out := make([]jobstore.Location, 0, len(ids))
	for start := 0; start < len(ids); start += locateChunk {
		ctx, cancel := context.WithTimeout(context.Background(), locateFor)
		got, err := loc.Locate(ctx, ids[start:min(start+locateChunk, len(ids))])
		cancel()
		out = append(out, got...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func isOpen(st jobstore.Status) bool {
	return st == jobstore.StatusQueued || st == jobstore.StatusScheduled || st == jobstore.StatusInProgress
}

// settleByStats is the read-back of a store without jobstore.Locator: each
// open job's record read one by one (Get); an open record is lost only when
// the store's exact Stats hold no job at all.
func (e *Reader) settleByStats(ctx context.Context, jobs []ledger.OutstandingJob) {
	at := time.Now()
	held, counted := e.storeUnfinished(ctx)
	empty := counted && held == 0 && e.Store.Capabilities().Has(jobstore.CapExactStats)
	if counted && len(jobs) > bulkCutOff && held >= int64(len(jobs)) {
		// A backlog far beyond what the drain could run (a prefill of a
		// million): the store still holds at least as many unfinished jobs
		// as the ledger has open, so none is provably lost, and reading each
		// back would outlast any budget and call the unread ones lost.
		for _, j := range jobs {
			e.Ledger.CutOff(j.ID)
		}
		return
	}
	for _, j := range jobs {
		rb := Result{Err: ctx.Err()}
		if rb.Err == nil {
			gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
			rb = e.Settle(gctx, j.ID, j.Attempt, "", at)
			gcancel()
		}
		switch {
		case rb.Settled:
		case errors.Is(rb.Err, jobstore.ErrNotFound):
			e.notFound(j)
		case rb.Err != nil:
			e.Ledger.Unreadable(j.ID)
		case rb.Rec.Status == jobstore.StatusInProgress && !rb.Rec.LeaseDeadline.IsZero() && rb.Rec.LeaseDeadline.Before(at) &&
			e.Store.Capabilities().Has(jobstore.CapSeedVariant):
			// A seed variant strands jobs: in progress, its claim long
			// expired, in no index its recovery reads. Lost, not cut off.
			e.Ledger.LostState(j.ID, "InProgress_never_recovered")
		case isOpen(rb.Rec.Status):
			if empty {
				e.Ledger.LostState(j.ID, rb.Rec.Status.String()+"_in_no_queue")
				continue
			}
			e.Ledger.CutOff(j.ID)
		default:
			e.Ledger.LostState(j.ID, rb.Rec.Status.String())
		}
	}
}

// notFound places an open job the store no longer holds: lost, unless it
// started in a store that deletes finished records
// (jobstore.FinishedRemover), where it may have finished with its event
// cut off: unconfirmed, in the store's words.
func (e *Reader) notFound(j ledger.OutstandingJob) {
	if fr, ok := e.Store.(jobstore.FinishedRemover); ok && j.Started {
		if why := fr.RemovesFinished(); why != "" {
			e.Ledger.Unconfirmed(j.ID, why)
			return
		}
	}
	e.Ledger.LostState(j.ID, "not_found")
}

// bulkCutOff: with more open jobs than this after the drain, and a store
// that still holds as many unfinished, the jobs are cut off in bulk
// instead of read back one by one.
const bulkCutOff = 10000

// storeUnfinished is how many due, delayed and running jobs the store's
// Stats count (a store without jobstore.CapExactStats may split due and
// delayed loosely, but counts what it holds); ok false when Stats fails.
func (e *Reader) storeUnfinished(ctx context.Context) (int64, bool) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := e.Store.Stats(sctx)
	if err != nil {
		return 0, false
	}
	return st.Due + st.Delayed + st.InProgress, true
}
