package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// readBack is what a read-back of a job's record found.
type readBack struct {
	rec     jobstore.Job
	err     error // from store.Get; nil when the record was read
	settled bool  // the record showed the job finished and the ledger was told
}

// settle is the one read-back that settles a job whose events were cut
// off: a worker process killed between its Complete and the event reaching
// the coordinator, a Complete or Fail whose reply was lost, a job still
// outstanding when the drain ended. As Jepsen's checkers do with a final
// read, the store's record decides: Completed -> completed, Failed ->
// dead-lettered, Canceled -> canceled, and the ledger is told. With a
// token, only a record finished under that claim counts: a record
// finished under another claim was finished by a worker that reports it
// itself. Without a token (after the drain) any finished record counts.
func (e *engine) settle(ctx context.Context, id string, attempt int, token string, at time.Time) readBack {
	j, err := e.store.Get(ctx, id)
	if err != nil {
		return readBack{err: err}
	}
	rb := readBack{rec: j}
	if token != "" && j.LeaseToken != token {
		return rb
	}
	switch j.Status {
	case jobstore.StatusCompleted:
		e.led.Completed(id, attempt, at)
		e.c.completed.Add(1)
	case jobstore.StatusFailed:
		e.led.Failed(id, attempt, jobstore.FailResult{Status: jobstore.StatusFailed}, at)
		e.c.dead.Add(1)
	case jobstore.StatusCanceled:
		e.led.Canceled(id, at)
	default:
		return rb
	}
	e.led.NoteSettled()
	rb.settled = true
	return rb
}

// resolveUnknown settles a job whose Complete or Fail outcome is unknown;
// it retries while Redis is unreachable, for up to resolveFor. One still
// held under the token was not finished by that call: the recoverer takes
// it back when the lease expires.
func (e *engine) resolveUnknown(id string, attempt int, token string, at time.Time) {
	e.resolvers.Add(1)
	go func() {
		defer e.resolvers.Done()
		deadline := time.Now().Add(resolveFor)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			rb := e.settle(ctx, id, attempt, token, at)
			cancel()
			if rb.settled {
				e.c.ackLost.Add(1)
			}
			if rb.err == nil || errors.Is(rb.err, jobstore.ErrNotFound) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// resolveFor bounds the read-back of an unknown outcome.
const resolveFor = 20 * time.Second

// settleFor bounds the read-back after the drain: a Redis that is down
// leaves the rest unread, reported lost as unreadable.
const settleFor = 15 * time.Second

// settleOutstanding reads back every acknowledged job the ledger still
// holds open after the drain, before the ledger's check: a job the store
// shows finished is settled, one still queued or running where the store
// will reach it was cut off by the drain, and only the rest is lost, with
// the state the store showed. A store that implements jobstore.Locator
// says for every open job, in batches and however many there are, whether
// its record sits in an index its claims, movers or recovery read: an open
// record in none is lost ("<Status>_in_no_queue") whatever the backlog
// beside it. Without one, an open record counts as lost only while the
// store's exact Stats hold no job at all.
func (e *engine) settleOutstanding() {
	jobs := e.led.OutstandingJobs()
	if len(jobs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleFor)
	defer cancel()
	if loc, ok := e.store.(jobstore.Locator); ok {
		if e.settleLocated(ctx, loc, jobs) {
			return
		}
	}
	e.settleByStats(ctx, jobs)
}

// settleLocated settles jobs with the store's Locate: false when Locate
// failed before it placed any job (the caller falls back to Stats).
func (e *engine) settleLocated(ctx context.Context, loc jobstore.Locator, jobs []ledger.OutstandingJob) bool {
	at := time.Now()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	locs, err := locateAll(loc, ids)
	if len(locs) == 0 && err != nil {
		if !errors.Is(err, jobstore.ErrUnsupported) {
			e.noteErr(fmt.Errorf("read-back: locate: %w", err))
		}
		return false
	}
	for i, j := range jobs {
		if i >= len(locs) {
			e.led.LostState(j.ID, "unreadable") // Locate broke off (Redis down)
			continue
		}
		l := locs[i]
		switch {
		case !l.Found:
			e.led.LostState(j.ID, "not_found")
		case !isOpen(l.Status):
			gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
			rb := e.settle(gctx, j.ID, j.Attempt, "", at)
			gcancel()
			if !rb.settled {
				e.led.LostState(j.ID, l.Status.String())
			}
		case l.Reachable:
			e.led.CutOff(j.ID)
		case l.Later != "":
			e.led.CutOff(j.ID)
			e.laterWhy = l.Later
		default:
			e.led.LostState(j.ID, l.Status.String()+"_in_no_queue")
		}
	}
	return true
}

// quietReadBack bounds the drain's read-back of open jobs: above it the
// drain waits out its time instead (a backlog far beyond what a read-back
// can afford each second).
const quietReadBack = 10000

// settleFinished is the drain's read-back: every open job the store shows
// finished is settled, so a job whose completion event never reached the
// ledger does not hold the drain to its end. Open jobs stay open; only the
// final read-back calls a job lost. It reports whether the drain may end
// now: every job still open is one that nothing will run (in no queue, not
// found: lost, or a loss the system declares) or that the system takes
// back itself later than the run waits (Location.Later). Waiting longer
// changes neither, and a declared loss must not hold the drain to its end.
func (e *engine) settleFinished() (over bool) {
	jobs := e.led.OutstandingJobs()
	if len(jobs) == 0 || len(jobs) > quietReadBack {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleFor)
	defer cancel()
	at := time.Now()
	if loc, ok := e.store.(jobstore.Locator); ok {
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
				if !e.settle(ctx, jobs[i].ID, jobs[i].Attempt, "", at).settled {
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
		e.settle(gctx, j.ID, j.Attempt, "", at)
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
func (e *engine) settleByStats(ctx context.Context, jobs []ledger.OutstandingJob) {
	at := time.Now()
	held, counted := e.storeUnfinished(ctx)
	empty := counted && held == 0 && e.store.Capabilities().Has(jobstore.CapExactStats)
	if counted && len(jobs) > bulkCutOff && held >= int64(len(jobs)) {
		// A backlog far beyond what the drain could run (a prefill of a
		// million): the store still holds at least as many unfinished jobs
		// as the ledger has open, so none is provably lost, and reading each
		// back would outlast any budget and call the unread ones lost.
		for _, j := range jobs {
			e.led.CutOff(j.ID)
		}
		return
	}
	for _, j := range jobs {
		rb := readBack{err: ctx.Err()}
		if rb.err == nil {
			gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
			rb = e.settle(gctx, j.ID, j.Attempt, "", at)
			gcancel()
		}
		switch {
		case rb.settled:
		case errors.Is(rb.err, jobstore.ErrNotFound):
			e.led.LostState(j.ID, "not_found")
		case rb.err != nil:
			e.led.LostState(j.ID, "unreadable")
		case rb.rec.Status == jobstore.StatusInProgress && !rb.rec.LeaseDeadline.IsZero() && rb.rec.LeaseDeadline.Before(at) &&
			e.store.Capabilities().Has(jobstore.CapSeedVariant):
			// A seed variant strands jobs: in progress, its claim long
			// expired, in no index its recovery reads. Lost, not cut off.
			e.led.LostState(j.ID, "InProgress_never_recovered")
		case isOpen(rb.rec.Status):
			if empty {
				e.led.LostState(j.ID, rb.rec.Status.String()+"_in_no_queue")
				continue
			}
			e.led.CutOff(j.ID)
		default:
			e.led.LostState(j.ID, rb.rec.Status.String())
		}
	}
}

// bulkCutOff: with more open jobs than this after the drain, and a store
// that still holds as many unfinished, the jobs are cut off in bulk
// instead of read back one by one.
const bulkCutOff = 10000

// storeUnfinished is how many due, delayed and running jobs the store's
// Stats count (a store without jobstore.CapExactStats may split due and
// delayed loosely, but counts what it holds); ok false when Stats fails.
func (e *engine) storeUnfinished(ctx context.Context) (int64, bool) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := e.store.Stats(sctx)
	if err != nil {
		return 0, false
	}
	return st.Due + st.Delayed + st.InProgress, true
}
