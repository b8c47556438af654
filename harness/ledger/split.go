package ledger

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/hist"
)

// Group is one class of a run's jobs (a kind, a tenant, the jobs intended
// in a failure window) as the ledger saw them: its jobs judged as Check
// judges them all (every job of the class, warm-up included, so the groups
// of a split add up to the run), and the latencies of its measured jobs,
// taken from the ledger's own times after the run rather than recorded on
// the hot path.
type Group struct {
	Tally
	Planned              int64
	Completed            int64
	DeadLettered         int64
	DuplicateCompletions int64
	// CompletedInWindow: completed by the measured window's end (the
	// throughput the class got while the load was on, before the drain).
	CompletedInWindow int64
	// Retries is the retries the class's jobs took (Fail's and Recover's).
	Retries int64
	// E2E: intended enqueue to the completion booked, for immediate jobs
	// completed with no retry (as the run's e2e). QueueWait: the first
	// attempt's start minus when it became due, for immediate jobs (the
	// first-attempt latency). Lateness: a delayed job's first start minus
	// its RunAt. nil: no such job.
	E2E, QueueWait, Lateness *hdr.Histogram
}

// splitDigits is the groups' histogram precision: two significant digits
// (1%) keep a group's histogram near 30 KB, where the run's three digits
// take 230 KB, and a split may have ten thousand tenants.
const splitDigits = 2

// Split judges the run's jobs by class: classes appends to dst the indexes
// (into n groups) that job id, intended at intended, belongs to. speed
// turns the wall clock's durations into the run's (simulated time; 1 in
// real time), as the run's recorders do; windowEnd is the measured
// window's end (Group.CompletedInWindow).
func (l *Ledger) Split(n int, speed float64, windowEnd time.Time, classes func(id string, intended time.Time, dst []int) []int) []Group {
	out := make([]Group, n)
	speed = max(speed, 1)
	var idx []int
	l.each(func(id string, e *ledgerEntry) {
		idx = classes(id, time.Unix(0, e.intended), idx[:0])
		if len(idx) == 0 {
			return
		}
		var r Report
		r.countEntry(id, e)
		for _, i := range idx {
			if i < 0 || i >= n {
				continue
			}
			g := &out[i]
			g.add(r, e)
			if e.completions > 0 && e.doneAt <= windowEnd.UnixNano() {
				g.CompletedInWindow++
			}
			if e.measured {
				g.record(e, speed)
			}
		}
	})
	return out
}

func (g *Group) add(r Report, e *ledgerEntry) {
	g.Planned++
	g.Acknowledged += r.Acknowledged
	g.Lost += r.Lost
	g.StartedEarly += r.StartedEarly
	g.Duplicated += r.DuplicateStarts + r.DuplicateCompletions + r.DuplicateReruns
	g.DuplicateCompletions += r.DuplicateCompletions
	g.Completed += r.Completed
	g.DeadLettered += r.DeadLettered
	g.Retries += int64(e.retries)
}

// record adds a measured job's latencies.
func (g *Group) record(e *ledgerEntry, speed float64) {
	if len(e.attempts) == 0 {
		return
	}
	put := func(h **hdr.Histogram, ns int64) {
		if *h == nil {
			*h = hdr.New(1000, hist.Highest, splitDigits)
		}
		_ = (*h).RecordValue(min(max(int64(float64(ns)*speed), 0), hist.Highest))
	}
	first := e.attempts[0]
	switch {
	case e.runAt != 0 && first.firstStart != 0:
		put(&g.Lateness, first.firstStart-e.runAt)
	case e.runAt == 0 && first.firstStart != 0 && first.due != 0:
		put(&g.QueueWait, first.firstStart-first.due)
	}
	if e.runAt == 0 && e.completions > 0 && e.retries == 0 && e.doneAt != 0 {
		put(&g.E2E, e.doneAt-e.intended)
	}
}
