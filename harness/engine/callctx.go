package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// callDeadlines hands out the context of the store calls that must finish
// even when the run is stopped (Enqueue, Complete, Fail): never canceled,
// with a deadline at least limit away. One context serves every call for a
// second, instead of a context.WithTimeout per call, whose timer and
// allocations were about a tenth of the harness's CPU per job.
type callDeadlines struct {
	limit time.Duration
	cur   atomic.Pointer[deadlineCtx]
}

type deadlineCtx struct {
	ctx context.Context
	// cancel is never called: a context still in use must not be canceled,
	// and its own deadline releases its timer.
	cancel  context.CancelFunc
	renewAt int64 // unix ns after which a call takes a newer context
}

// at returns a context whose deadline is between limit and limit+1s after
// now.
func (d *callDeadlines) at(now time.Time) context.Context {
	ns := now.UnixNano()
	if c := d.cur.Load(); c != nil && ns < c.renewAt {
		return c.ctx
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(d.limit+time.Second))
	c := &deadlineCtx{ctx: ctx, cancel: cancel, renewAt: ns + int64(time.Second)}
	d.cur.Store(c)
	return ctx
}
