package conformance

import (
	"fmt"

	"github.com/aebench/aebench/jobstore"
)

// QueueLister is what a store with jobstore.CapQueues tells the suite of
// its queues: their names in priority order, their weights and the claim
// policy ("strict", "weighted" or "round_robin"; backends/queues).
type QueueLister interface {
	QueueNames() []string
	QueueWeights() []int
	QueuePolicy() string
}

// queueCases: several queues in one store, and its claim policy.
func queueCases() []testCase {
	return []testCase{
		{name: "QueueRouting", needs: needs(jobstore.CapQueues), noEncoding: true, fn: caseQueueRouting},
		{name: "QueuePolicy", needs: needs(jobstore.CapQueues), noEncoding: true, fn: caseQueuePolicy},
	}
}

// lister is the store's QueueLister; a store that declares CapQueues
// without one fails the case.
func (e *env) lister() QueueLister {
	e.t.Helper()
	ql, ok := e.s.(QueueLister)
	if !ok {
		e.t.Fatalf("the store declares %s but does not say its queues (conformance.QueueLister)", jobstore.CapQueues)
	}
	if len(ql.QueueNames()) < 2 {
		e.t.Fatalf("QueueNames %v: a store with queues has two or more", ql.QueueNames())
	}
	return ql
}

// caseQueueRouting: a job goes to the queue NewJob.Queue names, says so
// in Get and in its claim, and its lease completes it there.
func caseQueueRouting(e *env) {
	names := e.lister().QueueNames()
	want := map[string]string{}
	for _, q := range names {
		id := e.id("in-" + q)
		e.enqueue(jobstore.NewJob{ID: id, Queue: q, MaxRetries: 1})
		want[id] = q
		if j := e.get(id); j.Queue != q {
			e.t.Errorf("Get(%s).Queue = %q, want %q", id, j.Queue, q)
		}
	}
	err := e.s.Enqueue(e.ctx, jobstore.NewJob{ID: e.id("nowhere"), Queue: "no-such-queue"})
	if err == nil {
		e.t.Error("Enqueue to a queue the store lacks: no error, want ErrInvalid")
	}
	got := 0
	for _, c := range e.claim(len(names)+1, holdLease) {
		got++
		if q, ok := want[c.Job.ID]; !ok || c.Job.Queue != q {
			e.t.Errorf("claimed %s from queue %q, want %q", c.Job.ID, c.Job.Queue, q)
		}
		if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
			e.t.Errorf("Complete(%s) on queue %s: %v", c.Job.ID, c.Job.Queue, err)
		}
	}
	if got != len(names) {
		e.t.Errorf("claimed %d jobs, want one per queue (%d)", got, len(names))
	}
	for id := range want {
		e.wantStatus(id, jobstore.StatusCompleted)
	}
}

// caseQueuePolicy: Claim visits the queues as the policy says: strict
// drains the first before the next; round_robin serves each queue in
// turn; weighted serves them in proportion to their weights while all
// have work.
func caseQueuePolicy(e *env) {
	ql := e.lister()
	names, policy := ql.QueueNames(), ql.QueuePolicy()
	first, last := names[0], names[len(names)-1]
	switch policy {
	case "strict":
		// The last queue's jobs are older: strict serves the first anyway.
		e.fill(last, 3)
		e.fill(first, 3)
		for _, c := range e.claim(3, holdLease) {
			if c.Job.Queue != first {
				e.t.Errorf("strict: claimed %s from %s while %s had work", c.Job.ID, c.Job.Queue, first)
			}
		}
	case "round_robin":
		for _, q := range names {
			e.fill(q, 2)
		}
		seen := map[string]int{}
		for range names {
			for _, c := range e.claim(1, holdLease) {
				seen[c.Job.Queue]++
			}
		}
		if len(seen) != len(names) {
			e.t.Errorf("round_robin: %d claims of one job served %v, want each of %v once", len(names), seen, names)
		}
	case "weighted":
		e.weightedShares(names, ql.QueueWeights())
	default:
		e.t.Fatalf("QueuePolicy %q: the suite knows strict, weighted, round_robin", policy)
	}
}

// weightedShares claims one job at a time while every queue has work and
// compares each queue's share with its weight's.
func (e *env) weightedShares(names []string, weights []int) {
	const n = 300
	total := 0
	for i, q := range names {
		e.fill(q, n)
		total += weights[i]
	}
	seen := map[string]int{}
	for range n {
		for _, c := range e.claim(1, holdLease) {
			seen[c.Job.Queue]++
		}
	}
	for i, q := range names {
		want := float64(weights[i]) / float64(total)
		// Binomial over n claims: 0.12 is about four standard deviations
		// at the widest (want 0.5).
		if got := float64(seen[q]) / n; got < want-0.12 || got > want+0.12 {
			e.t.Errorf("weighted: queue %s (weight %d of %d) got %.2f of %d claims, want %.2f", q, weights[i], total, got, n, want)
		}
	}
}

// fill enqueues n jobs to queue q in one call.
func (e *env) fill(q string, n int) {
	e.t.Helper()
	jobs := make([]jobstore.NewJob, n)
	for i := range jobs {
		jobs[i] = jobstore.NewJob{ID: e.id(fmt.Sprintf("%s-%d", q, i)), Queue: q, MaxRetries: 1}
	}
	if err := e.s.Enqueue(e.ctx, jobs...); err != nil {
		e.t.Fatalf("Enqueue %d jobs to %s: %v", n, q, err)
	}
}
