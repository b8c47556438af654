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
	// WaitMaxBySecond, for the groups SplitOptions.Timed names: the
	// longest first-attempt queue-wait (ns, in the run's time base) of the
	// attempts that started in each second from SplitOptions.T0; -1 where
	// none started.
	WaitMaxBySecond []int64
}

// SplitOptions say how Split measures: Speed turns the wall clock's
// durations into the run's (simulated time; 1 in real time), as the run's
// recorders do; WindowEnd is the measured window's end
// (Group.CompletedInWindow); T0 the run's start and Timed the groups that
// get a per-second wait line (Group.WaitMaxBySecond).
type SplitOptions struct {
	Speed     float64
	WindowEnd time.Time
	T0        time.Time
	Timed     func(group int) bool
}

// splitDigits is the groups' histogram precision: two significant digits
// (1%) keep a group's histogram near 30 KB, where the run's three digits
// take 230 KB, and a split may have ten thousand tenants.
const splitDigits = 2

// Split judges the run's jobs by class: classes appends to dst the indexes
// (into n groups) that job id, intended at intended, belongs to.
func (l *Ledger) Split(n int, o SplitOptions, classes func(id string, intended time.Time, dst []int) []int) []Group {
	out := make([]Group, n)
	speed, windowEnd := max(o.Speed, 1), o.WindowEnd
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
			if o.Timed != nil && o.Timed(i) {
				g.timeWait(e, o.T0, speed)
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

// timeWait adds a job's first wait to the second its first attempt
// started in.
func (g *Group) timeWait(e *ledgerEntry, t0 time.Time, speed float64) {
	if e.runAt != 0 || len(e.attempts) == 0 || e.attempts[0].firstStart == 0 || e.attempts[0].due == 0 {
		return
	}
	a := e.attempts[0]
	sec := int(time.Duration(a.firstStart - t0.UnixNano()).Seconds())
	if sec < 0 || sec > 7*24*3600 {
		return
	}
	for len(g.WaitMaxBySecond) <= sec {
		g.WaitMaxBySecond = append(g.WaitMaxBySecond, -1)
	}
	g.WaitMaxBySecond[sec] = max(g.WaitMaxBySecond[sec], int64(float64(a.firstStart-a.due)*speed))
}
