package faults

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Affected is a job in flight at a fault.
type Affected struct {
	ID      string
	Attempt int
	// ClaimedAt is when the worker claimed it (zero: unknown).
	ClaimedAt time.Time
	// Started: its handler had started, so running it again repeats work
	// done or in progress (a duplicate execution).
	Started bool
}

// Record is what one fault did, for summary.json and the tables.
type Record struct {
	Index  int    `json:"index"`
	Kind   Kind   `json:"kind"`
	Point  Point  `json:"point,omitempty"`
	Target string `json:"target,omitempty"`
	// AtS is when the fault landed, in seconds from the start of the
	// measured window (negative during the warm-up), as on the plots.
	AtS float64 `json:"at_s"`
	// RunAtS is the same moment from the start of the run (warm-up
	// included), as the scenario's faults[].at counts. Both are in the
	// run's time base: simulated seconds on simulated time.
	RunAtS float64 `json:"run_at_s"`
	// PlannedS is when the schedule planned it, from the run's start in
	// the same base: a crash at a point lands when a worker reaches it, so
	// RunAtS may follow PlannedS by the time that takes.
	PlannedS float64 `json:"planned_s"`
	// Skipped says why a scheduled fault did not land (no such worker, the
	// run ended first); empty when it did.
	Skipped string `json:"skipped,omitempty"`
	// Affected counts jobs in flight at the fault (of the victim, or all
	// for Redis and network faults).
	Affected int `json:"affected"`
	// Restarted counts affected jobs whose handler started again.
	Restarted int `json:"restarted"`
	// Duplicates counts affected jobs that had started their handler and
	// started it again: work done or in progress run twice.
	Duplicates int `json:"duplicates"`
	// Lost counts affected jobs the ledger found lost.
	Lost int `json:"lost"`
	// NeverStarted counts affected jobs whose handler had not started:
	// leased to the victim and never run by it. Of the affected jobs,
	// DeadUnstarted ended dead-lettered and RecoveredUnstarted had an
	// attempt taken back by Recover, each on an attempt that never started
	// (the ledger's Outcome).
	NeverStarted       int `json:"never_started"`
	DeadUnstarted      int `json:"dead_unstarted"`
	RecoveredUnstarted int `json:"recovered_unstarted"`
	// RecoveryMaxNs is the slowest restart of an affected job, in the
	// run's time base like the recovery distribution.
	RecoveryMaxNs int64 `json:"recovery_max_ns"`

	at  time.Time
	ids []string // the affected jobs
}

// JobIDs lists the jobs the fault caught in flight (Affected of them).
func (r Record) JobIDs() []string { return r.ids }

// Time is when the fault landed, on the wall clock.
func (r Record) Time() time.Time { return r.at }

// Outcome is what the ledger found, after the drain, of a job a fault
// caught (Tracker.Finish).
type Outcome struct {
	Lost bool
	// DeadUnstarted, RecoveredUnstarted: dead-lettered, or taken back by
	// Recover, on an attempt whose handler never started.
	DeadUnstarted, RecoveredUnstarted bool
}

type watch struct {
	rec     *Record
	started bool
}

// Tracker measures recovery: at each fault it is given the jobs in flight;
// for each it waits for the job's next handler start, recording the time
// from the fault (recovery latency, an HdrHistogram in ns). Started is on
// every job's path: it costs one atomic load while nothing is watched.
type Tracker struct {
	base     time.Time // start of the measured window
	watching atomic.Int64
	mu       sync.Mutex
	watch    map[string][]watch
	records  []*Record
	hist     *hdr.Histogram
	caught   map[string]struct{} // every job any fault caught in flight
}

// NewTracker returns a tracker whose times are reported relative to base.
func NewTracker(base time.Time) *Tracker {
	return &Tracker{base: base, watch: map[string][]watch{}, hist: hdr.New(1000, int64(time.Hour), 3), caught: map[string]struct{}{}}
}

// Caught reports whether a fault caught id in flight.
func (t *Tracker) Caught(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.caught[id]
	return ok
}

// Fault records a fault that landed at `at` with the jobs it caught in flight.
func (t *Tracker) Fault(ev Event, target string, at time.Time, affected []Affected) *Record {
	r := &Record{Index: ev.Index, Kind: ev.Fault.Kind, Point: ev.Point, Target: target,
		AtS: at.Sub(t.base).Seconds(), PlannedS: ev.At.Seconds(), Affected: len(affected), at: at}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.records = append(t.records, r)
	for _, a := range affected {
		r.ids = append(r.ids, a.ID)
		t.caught[a.ID] = struct{}{}
		if !a.Started {
			r.NeverStarted++
		}
		started := a.Started
		// Caught again before its handler started: it was taken back and
		// claimed, so the earlier faults' recovery ends at that claim (else
		// the second crash's lease would count twice in the first's
		// recovery); a repeat of work done before moves to this watch.
		for _, w := range t.watch[a.ID] {
			end := a.ClaimedAt
			if end.IsZero() || end.Before(w.rec.at) {
				end = at
			}
			w.rec.Restarted++
			w.rec.RecoveryMaxNs = max(w.rec.RecoveryMaxNs, int64(end.Sub(w.rec.at)))
			_ = t.hist.RecordValue(max(int64(end.Sub(w.rec.at)), 1000))
			started = started || w.started
			t.watching.Add(-1)
		}
		t.watch[a.ID] = []watch{{rec: r, started: started}}
	}
	t.watching.Add(int64(len(affected)))
	return r
}

// Leased adds id to the fault that killed target (a worker's id, as a
// Record's Target), when the job was leased to it before that fault: a job
// the victim held but had not reported when it died (a claim's or a
// hand-off's reply in transit), found after the drain by its record's
// last lease. It counts as in flight at that fault and never started.
// False: no fault hit target, or hit it before the lease began.
func (t *Tracker) Leased(target string, leasedAt time.Time, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.caught[id]; ok {
		return true
	}
	for _, r := range t.records {
		if r.Skipped != "" || r.Target != target || r.at.Before(leasedAt.Add(-leaseSkew)) {
			continue
		}
		r.ids = append(r.ids, id)
		r.Affected++
		r.NeverStarted++
		t.caught[id] = struct{}{}
		return true
	}
	return false
}

// leaseSkew is how far a lease's start, on the store's clock (a worker
// process's, or Redis's), may read after the fault on the coordinator's.
const leaseSkew = 50 * time.Millisecond

// Skipped records a scheduled fault that did not land, and why.
func (t *Tracker) Skipped(ev Event, at time.Time, why string) {
	t.mu.Lock()
	t.records = append(t.records, &Record{Index: ev.Index, Kind: ev.Fault.Kind, Point: ev.Point,
		AtS: at.Sub(t.base).Seconds(), PlannedS: ev.At.Seconds(), Skipped: why, at: at})
	t.mu.Unlock()
}

// Started is called at every handler start.
func (t *Tracker) Started(id string, at time.Time) {
	if t == nil || t.watching.Load() == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.watch[id]
	if len(ws) == 0 {
		return
	}
	delete(t.watch, id)
	t.watching.Add(-int64(len(ws)))
	for _, w := range ws {
		d := at.Sub(w.rec.at)
		if d < 0 {
			d = 0
		}
		w.rec.Restarted++
		if w.started {
			w.rec.Duplicates++
		}
		w.rec.RecoveryMaxNs = max(w.rec.RecoveryMaxNs, int64(d))
		_ = t.hist.RecordValue(max(int64(d), 1000))
	}
}

// Summary is the recovery report of one run.
type Summary struct {
	// Faults counts faults that landed, by kind; Skipped those that did not.
	Faults   map[Kind]int `json:"faults"`
	Landed   int          `json:"landed"`
	Skipped  int          `json:"skipped"`
	Affected int          `json:"affected"`
	// Restarted: affected jobs that started again; RecoveryNs is the
	// distribution of fault -> next handler start over them.
	Restarted  int                `json:"restarted"`
	RecoveryNs map[string]float64 `json:"recovery_ns,omitempty"`
	Duplicates int                `json:"duplicates"`
	Lost       int                `json:"lost"`
	// NeverStarted, DeadUnstarted, RecoveredUnstarted: Record's, summed.
	NeverStarted       int      `json:"never_started"`
	DeadUnstarted      int      `json:"dead_unstarted"`
	RecoveredUnstarted int      `json:"recovered_unstarted"`
	Records            []Record `json:"records"`
}

// Finish closes the books: outcome is what the ledger found of a job.
// The histogram is returned for the .hgrm and merged plots.
func (t *Tracker) Finish(outcome func(id string) Outcome) (Summary, *hdr.Histogram) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, ws := range t.watch {
		if outcome(id).Lost {
			for _, w := range ws {
				w.rec.Lost++
			}
		}
	}
	for _, r := range t.records {
		for _, id := range r.ids {
			o := outcome(id)
			if o.DeadUnstarted {
				r.DeadUnstarted++
			}
			if o.RecoveredUnstarted {
				r.RecoveredUnstarted++
			}
		}
	}
	s := Summary{Faults: map[Kind]int{}}
	sort.SliceStable(t.records, func(i, j int) bool { return t.records[i].at.Before(t.records[j].at) })
	for _, r := range t.records {
		s.Records = append(s.Records, *r)
		if r.Skipped != "" {
			s.Skipped++
			continue
		}
		s.Landed++
		s.Faults[r.Kind]++
		s.Affected += r.Affected
		s.Restarted += r.Restarted
		s.Duplicates += r.Duplicates
		s.Lost += r.Lost
		s.NeverStarted += r.NeverStarted
		s.DeadUnstarted += r.DeadUnstarted
		s.RecoveredUnstarted += r.RecoveredUnstarted
	}
	if t.hist.TotalCount() > 0 {
		h := t.hist
		s.RecoveryNs = map[string]float64{"p50": float64(h.ValueAtQuantile(50)), "p99": float64(h.ValueAtQuantile(99)),
			"max": float64(h.Max()), "mean": h.Mean(), "count": float64(h.TotalCount())}
	}
	return s, t.hist
}
