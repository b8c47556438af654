package readback_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/readback"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/redisserver/redistest"
)

// TestUnconfirmedInNativeMode runs asynq, a real peer, in both peer modes:
// job "done" is started and completed, its completion never told to the
// ledger (an event a kill cut off); job "gone" was acknowledged and never
// existed. In contract mode the read-back finds "done" completed and
// settles it; in native mode asynq deleted it as it completed, so the
// read-back counts it unconfirmed, in asynq's declared words, not lost.
// "gone" never started, so it is lost in both.
func TestUnconfirmedInNativeMode(t *testing.T) {
	for _, tc := range []struct {
		mode                   string
		completed, unconfirmed int64
	}{
		{"contract", 1, 0},
		{"native", 0, 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx := context.Background()
			c, _ := redistest.Client(t)
			be, _ := registry.Lookup("asynq")
			st, err := be.Build(ctx, c, jobstore.Options{Queue: "rb-" + tc.mode, Retention: time.Hour},
				map[string]string{"peer_mode": tc.mode, "task_check_interval": "10ms"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Enqueue(ctx, jobstore.NewJob{ID: "done"}); err != nil {
				t.Fatal(err)
			}
			led := ledger.New()
			now := time.Now()
			led.Planned([]ledger.PlannedJob{{ID: "done", Intended: now}, {ID: "gone", Intended: now}}, now)
			led.Acked([]string{"done", "gone"})
			cl, err := st.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute, Wait: 10 * time.Second})
			if err != nil || len(cl) != 1 {
				t.Fatalf("Claim = %v, %v", cl, err)
			}
			led.Started("done", 0, time.Now())
			if err := st.Complete(ctx, cl[0].Lease, nil); err != nil {
				t.Fatal(err)
			}
			waitFinished(t, st, "done", tc.mode == "native")
			rd := &readback.Reader{Store: st, Ledger: led, NoteErr: func(err error) { t.Log(err) },
				Completed: func() {}, Dead: func() {}, AckLost: func() {}}
			rd.Outstanding()
			rep := led.Check()
			if rep.Completed != tc.completed || rep.Unconfirmed != tc.unconfirmed || rep.Lost != 1 || rep.LostIDs[0] != "gone" {
				t.Fatalf("completed %d, unconfirmed %d, lost %d %v; want %d, %d, 1 [gone]",
					rep.Completed, rep.Unconfirmed, rep.Lost, rep.LostIDs, tc.completed, tc.unconfirmed)
			}
			if tc.unconfirmed > 0 && rep.UnconfirmedWhy == "" {
				t.Error("unconfirmed jobs without the store's declaration")
			}
		})
	}
}

// waitFinished waits until asynq has written the completion: the record
// completed, or (removed) gone.
func waitFinished(t *testing.T, st jobstore.Store, id string, removed bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		j, err := st.Get(context.Background(), id)
		if removed && errors.Is(err, jobstore.ErrNotFound) || !removed && err == nil && j.Status == jobstore.StatusCompleted {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: asynq did not finish it within 10s", id)
}
