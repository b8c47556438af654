package ledger

import (
	"container/heap"
	"sync"
	"time"
)

// pendingRunAts tracks the RunAts of acknowledged jobs and retries that are
// not yet due, so the backlog can be split into due and delayed: a delayed
// job waiting for its RunAt is not work a store is behind on, and counting
// it as backlog made the slowest mover look the least loaded. A min-heap:
// each collector tick pops what has come due.
type pendingRunAts struct {
	mu sync.Mutex
	h  int64Heap
}

// add notes a RunAt (ns) asked for at now (ns); a RunAt already due is not
// delayed and is not kept.
func (p *pendingRunAts) add(runAt, now int64) {
	if runAt <= now {
		return
	}
	p.mu.Lock()
	heap.Push(&p.h, runAt)
	p.mu.Unlock()
}

// delayedAt pops every RunAt at or before now and returns how many are
// still in the future.
func (p *pendingRunAts) delayedAt(now time.Time) int64 {
	ns := now.UnixNano()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.h) > 0 && p.h[0] <= ns {
		heap.Pop(&p.h)
	}
	return int64(len(p.h))
}

type int64Heap []int64

func (h int64Heap) Len() int           { return len(h) }
func (h int64Heap) Less(i, j int) bool { return h[i] < h[j] }
func (h int64Heap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *int64Heap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *int64Heap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
