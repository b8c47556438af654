package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
)

func caseRedisUnreachable(e *env) {
	const callTimeout, maxReturn = 300 * time.Millisecond, 2 * time.Second
	var acked []string
	for i := range 5 {
		id := e.id(fmt.Sprintf("ack%d", i))
		e.enqueue(jobstore.NewJob{ID: id, MaxRetries: 5})
		acked = append(acked, id)
	}
	held := e.claimOne(acked[0], e.lease)

	rs := e.target.Redis
	if err := rs.Pause(); err != nil {
		e.t.Fatalf("Pause: %v", err)
	}
	resume := sync.OnceFunc(func() {
		if err := rs.Resume(); err != nil {
			e.t.Errorf("Resume: %v", err)
		}
	})
	e.t.Cleanup(resume)
	defer resume()

	call := func(what string, f func(ctx context.Context) error) {
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
	call("Enqueue", func(ctx context.Context) error {
		return e.s.Enqueue(ctx, jobstore.NewJob{ID: e.id("during-pause")})
	})
	call("Claim", func(ctx context.Context) error {
		_, err := e.s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "paused", Max: 2, Lease: e.lease})
		return err
	})
	call("Complete", func(ctx context.Context) error { return e.s.Complete(ctx, held.Lease, []byte("r")) })
	call("Stats", func(ctx context.Context) error { _, err := e.s.Stats(ctx); return err })
	resume()

	// The same store works on once Redis is back.
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

	// Every job acknowledged before the pause is still there and completes.
	// Calls sent during the pause may have run late (a Complete, a Claim
	// whose reply was lost), so finish what is left, recovering if needed.
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
		e.expire(e.lease) // a Claim sent during the pause ran late: take those jobs back
		e.recover(100)
	}
	for _, id := range acked {
		e.wantStatus(id, jobstore.StatusCompleted)
	}
}
