package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// TestAckBatchLeaseLost: one job of an ack batch lost its lease (it
// expired and was recovered while the ack waited); the flush completes the
// others in one call and books that one as fenced. On Redis stores with
// CompleteMany (zset, stream, bucket, dual; the floor has no recovery) and on the null store, which has no
// batch-complete: jobstore.CompleteAll's one-Complete-per-lease fallback.
func TestAckBatchLeaseLost(t *testing.T) {
	ctx := context.Background()
	rs := redistest.Start(t, redisserver.Options{})
	for _, tc := range []struct {
		backend string
		batch   bool // implements jobstore.BatchCompleter
	}{{"zset", true}, {"stream", true}, {"bucket", true}, {"dual", true}, {"null", false}} {
		t.Run(tc.backend, func(t *testing.T) {
			store := buildStore(t, ctx, rs, tc.backend)
			if _, ok := store.(jobstore.BatchCompleter); ok != tc.batch {
				t.Fatalf("%s: BatchCompleter %v, want %v", tc.backend, ok, tc.batch)
			}
			leaseLostInBatch(t, ctx, store)
		})
	}
}

func buildStore(t *testing.T, ctx context.Context, rs *redisserver.Redis, name string) jobstore.Store {
	t.Helper()
	be, err := registry.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	var c rclient.Client
	if be.Kind != registry.KindCalibration {
		if c, err = rclient.New("go-redis", rs.ClientOptions()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	s, err := be.Build(ctx, c, jobstore.Options{Queue: "acks-" + name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// leaseLostInBatch claims three jobs, lets one lease expire and recovers
// it, then flushes the three acks as one batch.
func leaseLostInBatch(t *testing.T, ctx context.Context, store jobstore.Store) {
	spec := shortRun(t, scenario.Override{Path: "workers.ack_batch", Value: "10"},
		scenario.Override{Path: "workers.ack_interval", Value: "1s"})
	e := &engine{cfg: spec.Config, store: store, wstore: store, led: ledger.New(), hardStop: make(chan struct{})}
	e.rb = e.newReader()
	e.events = ledgerEvents{Ledger: e.led, resolve: e.rb.ResolveUnknown}
	now := time.Now()
	e.warmEnd, e.t0 = now, now
	e.windowEnd.Store(now.Add(time.Hour).UnixNano())
	ids := []string{"short", "ok1", "ok2"}
	var planned []ledger.PlannedJob
	for _, id := range ids {
		planned = append(planned, ledger.PlannedJob{ID: id, Intended: now, Measured: true})
	}
	e.led.Planned(planned, now)
	for _, id := range ids {
		if err := store.Enqueue(ctx, jobstore.NewJob{ID: id, MaxRetries: 2}); err != nil {
			t.Fatal(err)
		}
	}
	e.led.Acked(ids)
	claim := func(n int, lease time.Duration) []jobstore.Claimed {
		got, err := store.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w0", Max: n, Lease: lease})
		if err != nil || len(got) != n {
			t.Fatalf("Claim(%d): %d jobs, %v", n, len(got), err)
		}
		return got
	}
	short := claim(1, 30*time.Millisecond)
	long := claim(2, time.Minute)
	time.Sleep(80 * time.Millisecond)
	if r, err := store.Recover(ctx, 10); err != nil || len(r.Requeued) != 1 {
		t.Fatalf("Recover: %+v, %v", r, err)
	}

	w := &worker{id: "w0", rec: e.newRecorder(), stop: e.hardStop, ctx: ctx, quit: func() {}}
	var wg sync.WaitGroup
	w.acks = e.startAcker(w, &wg)
	all := append(short, long...)
	e.c.inFlight.Add(int64(len(all)))
	for _, c := range all {
		e.led.Started(c.Lease.JobID, c.Lease.Attempt, time.Now())
		w.acks.add(pendingAck{lease: c.Lease, hs: time.Now(), he: time.Now(), measured: true})
	}
	w.acks.stopAcker() // flushes the three at once, without waiting out the interval
	wg.Wait()

	c := e.c.snapshot()
	if c.Fenced != 1 || c.Completed != 2 || c.CompleteErrors != 0 || c.CompleteCalls != 1 {
		t.Errorf("counters: fenced %d completed %d errors %d calls %d, want 1, 2, 0, 1",
			c.Fenced, c.Completed, c.CompleteErrors, c.CompleteCalls)
	}
	if n := e.c.inFlight.Load(); n != 0 {
		t.Errorf("%d jobs still in flight after the flush", n)
	}
	for _, c := range long {
		// (the null store keeps no finished record: not found is completed
		// there). The record keeps the completing lease's token: the
		// read-back after a worker's death (engine.settle) relies on it.
		id := c.Lease.JobID
		if j, err := store.Get(ctx, id); !errors.Is(err, jobstore.ErrNotFound) &&
			(err != nil || j.Status != jobstore.StatusCompleted || j.LeaseToken != c.Lease.Token) {
			t.Errorf("job %s: %v token %q %v, want completed under token %q", id, j.Status, j.LeaseToken, err, c.Lease.Token)
		}
	}
	if j, err := store.Get(ctx, "short"); err != nil || j.Status == jobstore.StatusCompleted {
		t.Errorf("job short (lease lost): %v %v, want not completed by the stale ack", j.Status, err)
	}
	var got hist.Set
	w.rec.DrainInto(&got)
	if h := got[hist.TagAckWait]; h == nil || h.TotalCount() != 2 {
		t.Errorf("ack_wait histogram: %v, want 2 values", h)
	}
}
