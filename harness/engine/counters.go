package engine

import (
	"sync/atomic"

	"github.com/aebench/aebench/harness/summary"
)

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
	// Calls Redis refused at maxmemory (rclient.IsOOM), jobs for Enqueue.
	oomEnqueued, oomCompletes, oomFails, oomRecovers atomic.Int64
	resent, resendRefused                            atomic.Int64
	// redelivered: starts a driver's system flagged as redeliveries.
	redelivered atomic.Int64
	// The counters every job moves are striped by worker (see striped).
	claimCalls, claimEmpty, claimed, started striped
	completed, completeCalls, inFlight       striped
	// faultsFired counts the fault events fired so far (the live series).
	faultsFired atomic.Int64
}

func (c *counters) snapshot() summary.Counters {
	return summary.Counters{EnqueueCalls: c.enqCalls.Load(), EnqueuedJobs: c.enqJobs.Load(), EnqueueErrors: c.enqErrors.Load(),
		Throttled: c.throttled.Load(), ClaimCalls: c.claimCalls.Load(), ClaimEmpty: c.claimEmpty.Load(), ClaimErrors: c.claimErrors.Load(),
		Claimed: c.claimed.Load(), Started: c.started.Load(), Completed: c.completed.Load(), Retried: c.retried.Load(),
		DeadLettered: c.dead.Load(), Fenced: c.fenced.Load(), CompleteErrors: c.completeErrors.Load(), FailErrors: c.failErrors.Load(),
		Extends: c.extends.Load(), ExtendErrors: c.extErrs.Load(), RecoverCalls: c.recoverCalls.Load(), RecoverErrors: c.recoverErrors.Load(),
		Recovered: c.recovered.Load(), RecoveredDead: c.rdead.Load(), Returned: c.returned.Load(), PromoteCalls: c.promoteCalls.Load(),
		PromoteErrors: c.promoteErrors.Load(), Promoted: c.promoted.Load(), AckLost: c.ackLost.Load(), CompleteCalls: c.completeCalls.Load(),
		StatsCalls: c.statsCalls.Load(), StatsErrors: c.statsErrors.Load(), Resent: c.resent.Load(), ResendRefused: c.resendRefused.Load(),
		Redelivered: c.redelivered.Load(),
		OOMRefused:  summary.OOMRefusals{Enqueued: c.oomEnqueued.Load(), Completes: c.oomCompletes.Load(), Fails: c.oomFails.Load(), Recovers: c.oomRecovers.Load()}}
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
