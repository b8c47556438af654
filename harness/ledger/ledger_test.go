package ledger

import (
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/aebench/aebench/jobstore"
)

// ledgerStep is one event fed to a ledger in a table test; times are ms
// after a fixed origin.
type ledgerStep struct {
	op      string // plan, plan-delayed, ack, enqfail, enqoom, completeoom, start, complete, retry, dead, fenced, recover, recover-dead, return
	id      string
	attempt int
	at      int64 // ms
	runAt   int64 // ms: plan-delayed's RunAt, retry's RunAt
}

var origin = time.UnixMilli(1_700_000_000_000)

func ms(n int64) time.Time { return origin.Add(time.Duration(n) * time.Millisecond) }

func play(l *Ledger, steps []ledgerStep) {
	for _, s := range steps {
		switch s.op {
		case "plan":
			l.Planned([]PlannedJob{{ID: s.id, Intended: ms(s.at), Measured: true}}, ms(s.at))
		case "plan-delayed":
			l.Planned([]PlannedJob{{ID: s.id, Intended: ms(s.at), RunAt: ms(s.runAt), Measured: true}}, ms(s.at))
		case "ack":
			l.Acked([]string{s.id})
		case "enqfail":
			l.EnqueueFailed([]string{s.id})
		case "enqoom":
			l.EnqueueRefused([]string{s.id})
		case "completeoom":
			l.CompleteRefused(s.id)
		case "start":
			l.Started(s.id, s.attempt, ms(s.at))
		case "complete":
			l.Completed(s.id, s.attempt, ms(s.at))
		case "retry":
			l.Failed(s.id, s.attempt, jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: ms(s.runAt)}, ms(s.at))
		case "dead":
			l.Failed(s.id, s.attempt, jobstore.FailResult{Status: jobstore.StatusFailed}, ms(s.at))
		case "fenced":
			l.Fenced(s.id, s.attempt, ms(s.at))
		case "recover":
			l.Recovered(jobstore.RecoverResult{Requeued: []string{s.id}}, ms(s.at))
		case "recover-dead":
			l.Recovered(jobstore.RecoverResult{DeadLettered: []string{s.id}}, ms(s.at))
		case "return":
			l.Recovered(jobstore.RecoverResult{Returned: []string{s.id}}, ms(s.at))
		default:
			panic("unknown op " + s.op)
		}
	}
}

// enqueued is plan+ack of an immediate job at t.
func enqueued(id string, t int64) []ledgerStep {
	return []ledgerStep{{op: "plan", id: id, at: t}, {op: "ack", id: id}}
}

func steps(parts ...[]ledgerStep) []ledgerStep { return slices.Concat(parts...) }

func TestLedger(t *testing.T) {
	cases := []struct {
		name  string
		steps []ledgerStep
		want  Report // compared on the counted fields and OK
	}{
		{"one job completed", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, OK: true}},
		{"acknowledged, never run: lost", enqueued("a", 0),
			Report{Attempted: 1, Acknowledged: 1, Lost: 1}},
		{"started, never finished: lost", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1}}),
			Report{Attempted: 1, Acknowledged: 1, Lost: 1, Executions: 1}},
		{"fenced completion does not count", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1}, {op: "fenced", id: "a", at: 2}}),
			Report{Attempted: 1, Acknowledged: 1, Lost: 1, Executions: 1, Fenced: 1}},
		{"dead-lettered is accounted, not lost", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "retry", id: "a", at: 2, runAt: 10},
			{op: "start", id: "a", attempt: 1, at: 11}, {op: "dead", id: "a", attempt: 1, at: 12}}),
			Report{Attempted: 1, Acknowledged: 1, DeadLettered: 1, Executions: 2, Reexecutions: 1, OK: true}},
		{"dead-lettered by Recover", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1}, {op: "recover-dead", id: "a", at: 50}}),
			Report{Attempted: 1, Acknowledged: 1, DeadLettered: 1, Executions: 1, OK: true}},
		{"unexpected start and completion", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2},
			{op: "start", id: "ghost", at: 3}, {op: "complete", id: "ghost", at: 4}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, Unexpected: 1}},
		{"unexpected recovery", []ledgerStep{{op: "recover", id: "ghost", at: 1}},
			Report{Unexpected: 1}},
		{"enqueue error, job ran anyway: indeterminate, not unexpected", []ledgerStep{
			{op: "plan", id: "a", at: 0}, {op: "enqfail", id: "a"}, {op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2}},
			Report{Attempted: 1, Indeterminate: 1, Completed: 1, Executions: 1, OK: true}},
		{"enqueue error, never ran: not lost", []ledgerStep{{op: "plan", id: "a", at: 0}, {op: "enqfail", id: "a"}},
			Report{Attempted: 1, Indeterminate: 1, OK: true}},
		{"started before the ack arrived", []ledgerStep{
			{op: "plan", id: "a", at: 0}, {op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2}, {op: "ack", id: "a"}},
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, OK: true}},
		{"same attempt started twice: duplicate", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "start", id: "a", at: 2}, {op: "complete", id: "a", at: 3}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, DuplicateStarts: 1, DuplicatedExecutions: 1, OK: true}},
		{"completed twice: duplicate", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2},
			{op: "start", id: "a", attempt: 1, at: 3}, {op: "complete", id: "a", attempt: 1, at: 4}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, Reexecutions: 1, DuplicateStarts: 1,
				DuplicateCompletions: 1, DuplicatedExecutions: 2, OK: true}},
		// Attempt 0 was still running (its Complete was fenced): attempt 1
		// runs the work again, a duplicate that at-least-once allows.
		{"recovered lease re-runs: allowed, counted", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "recover", id: "a", at: 40}, {op: "start", id: "a", attempt: 1, at: 41},
			{op: "fenced", id: "a", at: 42}, {op: "complete", id: "a", attempt: 1, at: 43}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, Reexecutions: 1, Recovered: 1, Fenced: 1,
				DuplicateReruns: 1, DuplicatedExecutions: 1, OK: true}},
		{"delayed job on time", steps([]ledgerStep{{op: "plan-delayed", id: "d", at: 0, runAt: 100}, {op: "ack", id: "d"},
			{op: "start", id: "d", at: 100}, {op: "complete", id: "d", at: 101}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, OK: true}},
		{"delayed job started early", steps([]ledgerStep{{op: "plan-delayed", id: "d", at: 0, runAt: 100}, {op: "ack", id: "d"},
			{op: "start", id: "d", at: 97}, {op: "complete", id: "d", at: 101}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, StartedEarly: 1, MaxEarlyNs: 3e6}},
		{"retry started before its backoff", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "retry", id: "a", at: 2, runAt: 200},
			{op: "start", id: "a", attempt: 1, at: 150}, {op: "complete", id: "a", attempt: 1, at: 151}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, Reexecutions: 1, StartedEarly: 1, MaxEarlyNs: 50e6}},
		{"retry started before Fail's reply reached the ledger", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "start", id: "a", attempt: 1, at: 5},
			{op: "retry", id: "a", at: 6, runAt: 4}, {op: "complete", id: "a", attempt: 1, at: 7}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, Reexecutions: 1, OK: true}},
		{"immediate job is never early", steps(enqueued("a", 10), []ledgerStep{{op: "start", id: "a", at: 5}, {op: "complete", id: "a", at: 6}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 1, OK: true}},
		{"started after completion: duplicate", steps(enqueued("a", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2}, {op: "start", id: "a", attempt: 1, at: 3}}),
			Report{Attempted: 1, Acknowledged: 1, Completed: 1, Executions: 2, Reexecutions: 1, DuplicateStarts: 1, DuplicatedExecutions: 1, OK: true}},
		{"mixed: one lost among many", steps(enqueued("a", 0), enqueued("b", 0), enqueued("c", 0), []ledgerStep{
			{op: "start", id: "a", at: 1}, {op: "complete", id: "a", at: 2}, {op: "start", id: "c", at: 1}, {op: "complete", id: "c", at: 2}}),
			Report{Attempted: 3, Acknowledged: 3, Completed: 2, Executions: 2, Lost: 1}},
	}
	for _, tc := range cases {
		for _, ids := range []struct {
			name string
			as   func(string) string
		}{{"map", func(id string) string { return id }}, {"dense", harnessID}} {
			t.Run(tc.name+"/"+ids.name, func(t *testing.T) {
				l := New()
				play(l, renamed(tc.steps, ids.as))
				got := l.Check()
				if got, want := stripIDs(got), stripIDs(tc.want); !reflect.DeepEqual(got, want) {
					t.Errorf("report\n got %+v\nwant %+v", got, want)
				}
				if l.Outstanding() != tc.want.Lost {
					t.Errorf("Outstanding() = %d, want %d (the lost jobs)", l.Outstanding(), tc.want.Lost)
				}
			})
		}
	}
}

// harnessID renames a test's id into the harness's own forms, whose
// entries live in the ledger's dense table: "ghost" becomes an id in the
// same chunk as a planned one but never planned itself.
func harnessID(id string) string {
	m := map[string]string{"a": "p0-1", "b": "p0-2", "c": "f-2", "d": "p1-7", "ghost": "p0-3"}
	if h, ok := m[id]; ok {
		return h
	}
	return id
}

func renamed(steps []ledgerStep, as func(string) string) []ledgerStep {
	out := slices.Clone(steps)
	for i := range out {
		out[i].id = as(out[i].id)
	}
	return out
}

func TestHarnessKey(t *testing.T) {
	cases := []struct {
		id      string
		fam     int
		n       int64
		isDense bool
	}{
		{"f-0", 0, 0, true}, {"f-1234", 0, 1234, true}, {"p0-1", 1, 1, true}, {"p12-99", 13, 99, true},
		{"p4094-5", 4095, 5, true}, {"p4095-5", 0, 0, false}, // beyond denseFamilies
		{"f-01", 0, 0, false}, {"p01-1", 0, 0, false}, {"f-", 0, 0, false}, {"p-1", 0, 0, false}, {"p0-", 0, 0, false},
		{"f-1x", 0, 0, false}, {"f--1", 0, 0, false}, {"f-1234567890123456789", 0, 0, false}, {"x-1", 0, 0, false},
		{"j1", 0, 0, false}, {"", 0, 0, false}, {"p", 0, 0, false},
	}
	for _, tc := range cases {
		k, ok := harnessKey(tc.id)
		if ok != tc.isDense || ok && (k.fam != tc.fam || k.n != tc.n) {
			t.Errorf("harnessKey(%q) = %+v, %v; want {%d %d}, %v", tc.id, k, ok, tc.fam, tc.n, tc.isDense)
		}
		if ok && k.id() != tc.id {
			t.Errorf("harnessKey(%q).id() = %q", tc.id, k.id())
		}
	}
}

// TestLedgerDenseBounds: an id far past every planned one, in a family
// never planned, or past the table's bounds is unexpected, and looking it
// up grows nothing.
func TestLedgerDenseBounds(t *testing.T) {
	l := New()
	play(l, steps(enqueued("f-5", 0), enqueued("f-999999999999999", 0)))
	for _, id := range []string{"f-6", "f-5000000", "p7-1", "f-999999999999998"} {
		l.Started(id, 0, ms(1))
	}
	l.Started("f-5", 0, ms(1))
	l.Completed("f-5", 0, ms(2))
	l.Started("f-999999999999999", 0, ms(1))
	l.Completed("f-999999999999999", 0, ms(2))
	r := l.Check()
	if r.Unexpected != 4 || r.Completed != 2 || r.Lost != 0 {
		t.Fatalf("report %+v", stripIDs(r))
	}
	if fs := l.dense.fams.Load(); fs == nil || len(*fs) != 1 || (*fs)[0].chunk(0) == nil || (*fs)[0].chunk(1) != nil {
		t.Fatalf("the dense table grew on a lookup")
	}
}

// stripIDs drops the example lists so reports compare on counts.
func stripIDs(r Report) Report {
	r.LostIDs, r.UnexpectedIDs, r.EarlyIDs, r.DuplicateIDs, r.Problems = nil, nil, nil, nil, nil
	return r
}

func TestLedgerProblemsNameIDs(t *testing.T) {
	for _, ids := range [][3]string{{"lost-1", "ghost-1", "early-1"}, {"f-17", "f-18", "p3-2048"}} {
		lost, ghost, early := ids[0], ids[1], ids[2]
		l := New()
		play(l, steps(enqueued(lost, 0), []ledgerStep{{op: "start", id: ghost, at: 1},
			{op: "plan-delayed", id: early, at: 0, runAt: 100}, {op: "ack", id: early},
			{op: "start", id: early, at: 50}, {op: "complete", id: early, at: 51}}))
		r := l.Check()
		if r.OK || len(r.Problems) != 3 {
			t.Fatalf("OK=%v problems=%v", r.OK, r.Problems)
		}
		if !slices.Equal(r.LostIDs, []string{lost}) || !slices.Equal(r.UnexpectedIDs, []string{ghost}) ||
			!slices.Equal(r.EarlyIDs, []string{early}) {
			t.Fatalf("ids: lost %v unexpected %v early %v", r.LostIDs, r.UnexpectedIDs, r.EarlyIDs)
		}
	}
}

// TestLedgerConcurrent feeds many goroutines at once (run with -race).
func TestLedgerConcurrent(t *testing.T) {
	l := New()
	const n = 2000
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				id := "j" + strconv.Itoa(i) // the map
				if i%2 == 0 {
					id = "p" + strconv.Itoa(g) + "-" + strconv.Itoa(i) // the dense table
				}
				l.Planned([]PlannedJob{{ID: id, Intended: origin}}, origin)
				l.Acked([]string{id})
				l.Started(id, 0, origin)
				l.Completed(id, 0, origin)
			}
		}()
	}
	wg.Wait()
	r := l.Check()
	if !r.OK || r.Acknowledged != n || r.Completed != n || l.Outstanding() != 0 {
		t.Fatalf("report %+v outstanding %d", r, l.Outstanding())
	}
}

func TestLedgerJobTimes(t *testing.T) {
	l := New()
	l.Planned([]PlannedJob{{ID: "a", Intended: ms(0), Measured: true}}, ms(2))
	l.Planned([]PlannedJob{{ID: "d", Intended: ms(0), RunAt: ms(100), Measured: false}}, ms(2))
	l.Acked([]string{"a", "d"})
	jt := l.Started("a", 0, ms(5))
	if !jt.Known || !jt.Measured || !jt.Due.Equal(ms(2)) || jt.Scheduled || jt.Delayed || !jt.Intended.Equal(ms(0)) {
		t.Errorf("immediate job times %+v", jt)
	}
	l.Failed("a", 0, jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: ms(50)}, ms(6))
	if jt := l.Started("a", 1, ms(51)); !jt.Due.Equal(ms(50)) || !jt.Scheduled {
		t.Errorf("retry times %+v", jt)
	}
	if jt := l.Started("d", 0, ms(101)); !jt.Due.Equal(ms(100)) || !jt.Scheduled || !jt.Delayed || jt.Measured {
		t.Errorf("delayed job times %+v", jt)
	}
	l.Recovered(jobstore.RecoverResult{Requeued: []string{"d"}}, ms(300))
	if jt := l.Started("d", 1, ms(301)); !jt.Due.Equal(ms(300)) || jt.Scheduled {
		t.Errorf("recovered attempt times %+v", jt)
	}
	if jt := l.Started("nope", 0, ms(1)); jt.Known {
		t.Errorf("unknown id has times %+v", jt)
	}
}

// TestLedgerCompletedAt: completing through the entry Started returned
// books the job as Completed by id does, and an unknown id has no entry.
func TestLedgerCompletedAt(t *testing.T) {
	for _, byEntry := range []bool{false, true} {
		l := New()
		l.Planned([]PlannedJob{{ID: "a", Intended: ms(0), Measured: true}}, ms(1))
		l.Acked([]string{"a"})
		jt := l.Started("a", 0, ms(5))
		if jt.Ref.e == nil || jt.Ref.s == nil {
			t.Fatalf("Started returned no entry: %+v", jt)
		}
		var done JobTimes
		if byEntry {
			done = l.CompletedAt(jt.Ref, ms(9))
		} else {
			done = l.Completed("a", 0, ms(9))
		}
		if !done.Known || !done.Measured || !done.Intended.Equal(ms(0)) || l.Outstanding() != 0 {
			t.Errorf("by entry %v: completed times %+v, outstanding %d", byEntry, done, l.Outstanding())
		}
		if r := l.Check(); r.Completed != 1 || r.Lost != 0 || !r.OK {
			t.Errorf("by entry %v: report %+v", byEntry, r)
		}
	}
	if jt := New().Started("nope", 0, ms(1)); jt.Ref.e != nil {
		t.Errorf("unknown id has an entry")
	}
}

// TestLedgerCountsReruns: a later attempt that starts while an earlier one
// ran (no Fail in between) is a duplicate; a retry after Fail is not.
func TestLedgerCountsReruns(t *testing.T) {
	l := New()
	now := timeNow()
	l.Planned([]PlannedJob{{ID: "a", Intended: now}, {ID: "b", Intended: now}, {ID: "c", Intended: now}}, now)
	l.Acked([]string{"a", "b", "c"})
	l.Started("a", 0, now)
	l.Started("a", 1, now) // recovered while attempt 0 still ran
	l.Completed("a", 1, now)
	l.Started("b", 0, now)
	l.Failed("b", 0, failRetry(now), now)
	l.Started("b", 1, now)
	l.Completed("b", 1, now)
	l.Started("c", 1, now) // attempt 0 crashed after its claim, before the handler
	l.Completed("c", 1, now)
	r := l.Check()
	if r.DuplicateReruns != 1 || r.DuplicatedExecutions != 1 || r.DuplicateIDs[0] != "a" || !r.OK {
		t.Fatalf("%+v", r)
	}
}

func timeNow() time.Time { return time.Now() }

func failRetry(now time.Time) jobstore.FailResult {
	return jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: now}
}

// TestLedgerDelayed: a delayed job and a retry count as delayed until their
// RunAt, then as due.
func TestLedgerDelayed(t *testing.T) {
	l := New()
	now := time.Now()
	l.Planned([]PlannedJob{{ID: "now", Intended: now}, {ID: "later", Intended: now, RunAt: now.Add(time.Hour)},
		{ID: "soon", Intended: now, RunAt: now.Add(time.Minute)}}, now)
	l.Acked([]string{"now", "later", "soon"})
	if got := l.Delayed(now); got != 2 {
		t.Fatalf("delayed at enqueue = %d, want 2", got)
	}
	if got := l.Delayed(now.Add(2 * time.Minute)); got != 1 {
		t.Fatalf("delayed after soon's RunAt = %d, want 1", got)
	}
	l.Started("now", 0, now)
	l.Failed("now", 0, jobstore.FailResult{Status: jobstore.StatusScheduled, RunAt: now.Add(3 * time.Hour)}, now.Add(2*time.Minute))
	if got := l.Delayed(now.Add(2 * time.Minute)); got != 2 {
		t.Fatalf("delayed with a retry pending = %d, want 2", got)
	}
	if got := l.Delayed(now.Add(4 * time.Hour)); got != 0 {
		t.Fatalf("delayed after every RunAt = %d, want 0", got)
	}
}

func TestLedgerShardFillsACacheLine(t *testing.T) {
	if n := unsafe.Sizeof(ledgerShard{}); n != 64 {
		t.Fatalf("ledgerShard is %d bytes, want 64 (one cache line)", n)
	}
}

// TestLedgerDenseGrowth plans jobs over many chunks while workers start
// and complete the ones already planned (run with -race: lookups take no
// lock while the directory doubles).
func TestLedgerDenseGrowth(t *testing.T) {
	l := New()
	const n = 20 * denseChunk
	ids := make(chan string, 256)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				l.Started(id, 0, origin)
				l.Completed(id, 0, origin)
			}
		}()
	}
	for i := range n {
		id := "p3-" + strconv.Itoa(i)
		l.Planned([]PlannedJob{{ID: id, Intended: origin}}, origin)
		l.Acked([]string{id})
		ids <- id
	}
	close(ids)
	wg.Wait()
	if r := l.Check(); !r.OK || r.Acknowledged != n || r.Completed != n {
		t.Fatalf("report %+v", stripIDs(r))
	}
}

// TestLedgerUnstarted: jobs leased and never run, by what became of the
// lease, each booked on the attempt the store's RetryCount says, whatever
// order the events arrive in; a dead letter with no start fails the check
// unless a fault caught the job or the scenario allows it.
func TestLedgerUnstarted(t *testing.T) {
	type counts struct{ recovered, dead, explained, returned int64 }
	cases := []struct {
		name     string
		steps    []ledgerStep
		caught   bool // a fault caught the job in flight
		allowed  bool // expect.dead_unstarted: allowed
		want     counts
		problems int
	}{
		{"started, expired, dead: not unstarted", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1}, {op: "recover-dead", id: "a", at: 5}}),
			false, false, counts{}, 0},
		{"never started, expired, retried and run", steps(enqueued("a", 0), []ledgerStep{{op: "recover", id: "a", at: 5}, {op: "start", id: "a", attempt: 1, at: 6}, {op: "complete", id: "a", attempt: 1, at: 7}}),
			false, false, counts{recovered: 1}, 0},
		{"the retry's start booked before the Recover that made it", steps(enqueued("a", 0), []ledgerStep{{op: "start", id: "a", at: 1},
			{op: "start", id: "a", attempt: 1, at: 6}, {op: "recover", id: "a", at: 5}, {op: "recover-dead", id: "a", at: 9}}),
			false, false, counts{}, 0},
		{"returned, then run as its first attempt", steps(enqueued("a", 0), []ledgerStep{{op: "return", id: "a", at: 5}, {op: "start", id: "a", at: 6}, {op: "complete", id: "a", at: 7}}),
			false, false, counts{returned: 1}, 0},
		{"dead with no start, no fault: a problem", steps(enqueued("a", 0), []ledgerStep{{op: "recover-dead", id: "a", at: 5}}),
			false, false, counts{dead: 1}, 1},
		{"dead with no start, caught by a fault", steps(enqueued("a", 0), []ledgerStep{{op: "recover-dead", id: "a", at: 5}}),
			true, false, counts{dead: 1, explained: 1}, 0},
		{"dead with no start, allowed", steps(enqueued("a", 0), []ledgerStep{{op: "recover-dead", id: "a", at: 5}}),
			false, true, counts{dead: 1}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			play(l, tc.steps)
			l.SetCaught(func(string) bool { return tc.caught }, tc.allowed)
			r := l.Check()
			got := counts{r.RecoveredUnstarted, r.DeadUnstarted, r.DeadUnstartedExplained, r.ReturnedUnstarted}
			if got != tc.want || len(r.Problems) != tc.problems {
				t.Errorf("recovered/dead/explained/returned unstarted = %+v, problems %v; want %+v and %d problem(s)", got, r.Problems, tc.want, tc.problems)
			}
		})
	}
}
