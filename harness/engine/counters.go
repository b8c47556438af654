package engine

import "sync/atomic"

// Counters are plain event counts of a run (all phases).
type Counters struct {
	EnqueueCalls   int64 `json:"enqueue_calls"`
	EnqueuedJobs   int64 `json:"enqueued_jobs"`
	EnqueueErrors  int64 `json:"enqueue_errors"`
	Throttled      int64 `json:"closed_loop_pauses"`
	ClaimCalls     int64 `json:"claim_calls"`
	ClaimEmpty     int64 `json:"claim_empty"`
	ClaimErrors    int64 `json:"claim_errors"`
	Claimed        int64 `json:"claimed"`
	Started        int64 `json:"started"`
	Completed      int64 `json:"completed"`
	Retried        int64 `json:"retried"`
	DeadLettered   int64 `json:"dead_lettered"`
	Fenced         int64 `json:"fenced"`
	CompleteErrors int64 `json:"complete_errors"`
	FailErrors     int64 `json:"fail_errors"`
	Extends        int64 `json:"extends"`
	ExtendErrors   int64 `json:"extend_errors"`
	RecoverCalls   int64 `json:"recover_calls"`
	RecoverErrors  int64 `json:"recover_errors"`
	Recovered      int64 `json:"recovered"`
	RecoveredDead  int64 `json:"recovered_dead"`
	// Returned counts jobs Recover put back without an attempt: handed to
	// a claimer that never touched them (jobstore.RecoverResult.Returned).
	Returned      int64 `json:"returned_unclaimed,omitempty"`
	PromoteCalls  int64 `json:"promote_calls"`
	PromoteErrors int64 `json:"promote_errors"`
	Promoted      int64 `json:"promoted"`
	// AckLost counts Complete or Fail calls that returned an error but had
	// been applied (read back from the store: the reply was lost).
	AckLost int64 `json:"ack_lost"`
	// CompleteCalls counts Complete calls, or CompleteAll calls with
	// workers.ack_batch > 1 (completed / complete_calls = jobs per ack call).
	CompleteCalls int64 `json:"complete_calls"`
	// StatsCalls and StatsErrors count the monitoring loop's Stats calls
	// (workers.monitor_interval).
	StatsCalls  int64 `json:"stats_calls,omitempty"`
	StatsErrors int64 `json:"stats_errors,omitempty"`
}

type counters struct {
	enqCalls, enqJobs, enqErrors, throttled       atomic.Int64
	claimErrors                                   atomic.Int64
	retried, dead, fenced                         atomic.Int64
	completeErrors, failErrors, extends, extErrs  atomic.Int64
	recoverCalls, recoverErrors, recovered, rdead atomic.Int64
	returned                                      atomic.Int64
	promoteCalls, promoteErrors, promoted         atomic.Int64
	ackLost                                       atomic.Int64
	statsCalls, statsErrors                       atomic.Int64
	// The counters every job moves are striped by worker (see striped).
	claimCalls, claimEmpty, claimed, started striped
	completed, completeCalls, inFlight       striped
	// faultsFired counts the fault events fired so far (the live series).
	faultsFired atomic.Int64
}

func (c *counters) snapshot() Counters {
	return Counters{c.enqCalls.Load(), c.enqJobs.Load(), c.enqErrors.Load(), c.throttled.Load(),
		c.claimCalls.Load(), c.claimEmpty.Load(), c.claimErrors.Load(), c.claimed.Load(),
		c.started.Load(), c.completed.Load(), c.retried.Load(), c.dead.Load(), c.fenced.Load(),
		c.completeErrors.Load(), c.failErrors.Load(), c.extends.Load(), c.extErrs.Load(),
		c.recoverCalls.Load(), c.recoverErrors.Load(), c.recovered.Load(), c.rdead.Load(), c.returned.Load(),
		c.promoteCalls.Load(), c.promoteErrors.Load(), c.promoted.Load(), c.ackLost.Load(), c.completeCalls.Load(),
		c.statsCalls.Load(), c.statsErrors.Load()}
}

// stripes is how many cache lines a striped counter spreads over.
const stripes = 8

// striped is a counter that workers add to on cache lines of their own
// (worker index mod stripes); Load sums them. With one atomic per counter,
// written from every core for every job, each job moved seven shared
// cache lines between the cores; a plain program's loop moves none.
type striped struct{ cells [stripes]paddedInt64 }

type paddedInt64 struct {
	atomic.Int64
	_ [56]byte // the rest of a 64-byte cache line
}

// at is worker i's stripe.
func (s *striped) at(i int) *atomic.Int64 { return &s.cells[i%stripes].Int64 }

// Add adds n on the first stripe, for callers that are not a worker.
func (s *striped) Add(n int64) { s.cells[0].Add(n) }

// Load is the counter's value: the sum of the stripes, read one after
// another, so not a snapshot across them. Its readers (the status line,
// the series, the drain's quiet check, which asks again) take a value a
// few jobs off; a worker's own +1 and -1 go to its one stripe.
func (s *striped) Load() int64 {
	var n int64
	for i := range s.cells {
		n += s.cells[i].Load()
	}
	return n
}
