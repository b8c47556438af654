package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/redisserver"
)

// transportCases: the store while its Redis refuses writes at maxmemory,
// and while it does not answer. Last in the suite: they change the
// target's configuration and pause it.
func transportCases() []testCase {
	return []testCase{
		{name: "RedisOutOfMemory", noEncoding: true, fn: caseRedisOutOfMemory},
		{name: "RedisUnreachable", noEncoding: true, fn: caseRedisUnreachable},
	}
}

// unreachableTimeouts: each call while Redis is paused runs under
// callTimeout and must return within maxReturn.
const (
	callTimeout = 300 * time.Millisecond
	maxReturn   = 2 * time.Second
)

func caseRedisUnreachable(e *env) {
	// The held job is claimed before the others are enqueued, so a store
	// without jobstore.CapQueueOrder (a sharded one) hands out that one.
	var acked []string
	var held jobstore.Claimed
	for i := range 5 {
		id := e.id(fmt.Sprintf("ack%d", i))
		e.enqueue(jobstore.NewJob{ID: id, MaxRetries: 5})
		acked = append(acked, id)
		if i == 0 {
			held = e.claimOne(id, e.lease)
		}
	}

	rs := e.target.Redis
	if err := rs.Pause(); err != nil {
		if errors.Is(err, redisserver.ErrNotOwned) {
			e.t.Skipf("target %q is a Redis this process did not spawn, so the suite cannot pause it: %v", e.target.Name, err)
		}
		e.t.Fatalf("Pause: %v", err)
	}
	resume := sync.OnceFunc(func() {
		if err := rs.Resume(); err != nil {
			e.t.Errorf("Resume: %v", err)
		}
	})
	e.t.Cleanup(resume)
	defer resume()

	e.whilePaused("Enqueue", func(ctx context.Context) error {
		return e.s.Enqueue(ctx, jobstore.NewJob{ID: e.id("during-pause")})
	})
	e.whilePaused("Claim", func(ctx context.Context) error {
		_, err := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "paused", Max: 2, Lease: e.lease})
		return err
	})
	e.whilePaused("Complete", func(ctx context.Context) error { return e.s.Complete(ctx, held.Lease, []byte("r")) })
	e.whilePaused("Stats", func(ctx context.Context) error { _, err := e.s.Stats(ctx); return err })
	resume()

	e.waitAnswering()
	e.finishAfterPause(held, acked)
}

// whilePaused runs one call while Redis is paused: it must fail, without a
// panic, soon after its context deadline.
func (e *env) whilePaused(what string, f func(ctx context.Context) error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
	defer cancel()
	ch := make(chan error, 1)
	start := time.Now()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- fmt.Errorf("panic: %v", p)
			}
		}()
		ch <- f(ctx)
	}()
	select {
	case err := <-ch:
		el := time.Since(start)
		if err == nil {
			e.t.Errorf("%s while Redis is paused: no error after %v", what, el.Round(time.Millisecond))
		} else if strings.HasPrefix(err.Error(), "panic: ") {
			e.t.Errorf("%s while Redis is paused: %v", what, err)
		}
		if el > maxReturn {
			e.t.Errorf("%s while Redis is paused returned after %v, want < %v (context deadline %v)", what, el.Round(time.Millisecond), maxReturn, callTimeout)
		}
		e.t.Logf("%s while paused: %v after %v", what, err, el.Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		e.t.Errorf("%s while Redis is paused hung for 5s (context deadline %v)", what, callTimeout)
	}
}

// waitAnswering waits until the same store answers Stats again after Resume.
func (e *env) waitAnswering() {
	e.t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < 10*time.Second {
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		_, err = e.s.Stats(ctx)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		e.t.Fatalf("Stats still failing %v after Resume: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if back := time.Since(start); back > time.Second {
		e.t.Logf("store answered again %v after Resume", back.Round(time.Millisecond))
	}
}

// finishAfterPause checks that every job acknowledged before the pause is
// still there and completes. Calls sent during the pause may have run late
// (a Complete, a Claim whose reply was lost), so it finishes what is left,
// recovering if needed: a store without lease recovery cannot take back a
// job whose late Claim it never answered, so it is skipped there.
func (e *env) finishAfterPause(held jobstore.Claimed, acked []string) {
	e.t.Helper()
	if err := e.s.Complete(e.ctx, held.Lease, []byte("r")); err != nil {
		if j := e.get(held.Job.ID); j.Status != jobstore.StatusCompleted {
			e.t.Errorf("Complete of the lease held across the pause: %v (job %v)", err, j.Status)
		}
	}
	for round := 0; round < 3; round++ {
		for {
			cl := e.claim(10, e.lease)
			if len(cl) == 0 {
				break
			}
			for _, c := range cl {
				if err := e.s.Complete(e.ctx, c.Lease, nil); err != nil {
					e.t.Errorf("Complete(%s) after the pause: %v", c.Job.ID, err)
				}
			}
		}
		if e.stats().InProgress == 0 {
			break
		}
		if !e.has(jobstore.CapLeaseRecovery) {
			skipLacking(e.t, e.backend.Name, e.caps, needs(jobstore.CapLeaseRecovery))
		}
		e.expire(e.lease) // a Claim sent during the pause ran late: take those jobs back
		e.recover(100)
	}
	for _, id := range acked {
		if j := e.get(id); j.Status == jobstore.StatusInProgress && !e.has(jobstore.CapLeaseRecovery) {
			// A Claim sent during the pause took it late, and nothing
			// takes back what a store without lease recovery handed out.
			skipLacking(e.t, e.backend.Name, e.caps, needs(jobstore.CapLeaseRecovery))
		}
		e.wantStatus(id, jobstore.StatusCompleted)
	}
}
