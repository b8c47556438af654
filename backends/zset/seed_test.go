package zset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// TestSeedVariantFidelity checks, per seed variant of this backend, the
// behaviour that sets its seed apart (each variant's doc cites the seed's
// lines), against a clock the test moves.
func TestSeedVariantFidelity(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	start := time.UnixMilli(1_700_000_000_000)
	n := 0
	build := func(t *testing.T, variant string, clk clock.Clock) jobstore.Store {
		t.Helper()
		n++
		s, err := Build(ctx, c, jobstore.Options{Queue: fmt.Sprintf("fid-%s-%d", variant, n), Clock: clk, PollInterval: time.Millisecond,
			Backoff: jobstore.Backoff{Base: time.Second}}, map[string]string{base.OptionVariant: variant})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claim := func(t *testing.T, s jobstore.Store) ([]jobstore.Claimed, error) {
		t.Helper()
		return s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: time.Second})
	}
	mustClaim := func(t *testing.T, s jobstore.Store, want int) []jobstore.Claimed {
		t.Helper()
		cl, err := claim(t, s)
		if err != nil || len(cl) != want {
			t.Fatalf("claim: %d jobs, %v; want %d", len(cl), err, want)
		}
		return cl
	}
	locate := func(t *testing.T, s jobstore.Store, id string) jobstore.Location {
		t.Helper()
		l, err := s.(jobstore.Locator).Locate(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		return l[0]
	}
	for _, tc := range []struct {
		variant, what string
		check         func(t *testing.T, s jobstore.Store, clk *clock.Manual)
	}{
		{VariantSeed001, "a fail with a future retry leaves the job in no queue (UpdateJob, line 273)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "r", MaxRetries: 3})
			cl := mustClaim(t, s, 1)
			res, err := s.Fail(ctx, cl[0].Lease, "boom")
			if err != nil || res.Status != jobstore.StatusScheduled {
				t.Fatalf("Fail: %+v, %v", res, err)
			}
			clk.Advance(time.Hour)
			mustClaim(t, s, 0)
			if l := locate(t, s, "r"); !l.Found || l.Status != jobstore.StatusScheduled || l.Reachable {
				t.Fatalf("Locate %+v: want Scheduled and in no queue", l)
			}
		}},
		{VariantSeed001, "a job whose WorkerId is set is refused: ALREADY_ASSIGNED (line 317)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "a"})
			cl := mustClaim(t, s, 1)
			// The head member read again, as a claimer that read it first would.
			st := s.(*Seed001)
			if _, err := c.Do(ctx, rclient.Cmd("ZADD", st.queue, "0", cl[0].Job.Ref)); err != nil {
				t.Fatal(err)
			}
			if _, err := claim(t, s); !errors.Is(err, ErrClaimConflict) {
				t.Fatalf("claim of an assigned job: %v, want ErrClaimConflict", err)
			}
		}},
		{VariantSeed004, "the pop takes the id out before work: after a crash nothing takes it back", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "p"})
			mustClaim(t, s, 1)
			clk.Advance(time.Hour)
			if r, err := s.Recover(ctx, 10); err != nil || len(r.Requeued) != 0 {
				t.Fatalf("Recover: %+v, %v; want nothing", r, err)
			}
			if l := locate(t, s, "p"); l.Reachable {
				t.Fatalf("Locate %+v: want in no queue", l)
			}
		}},
		{VariantSeed004, "its processing marker is a key of its own, counted with KEYS (line 332)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "k1"}, jobstore.NewJob{ID: "k2"})
			cl := mustClaim(t, s, 2)
			st, err := s.Stats(ctx)
			if err != nil || st.InProgress != 2 {
				t.Fatalf("Stats %+v, %v: want 2 in progress", st, err)
			}
			if err := s.Complete(ctx, cl[0].Lease, nil); err != nil {
				t.Fatal(err)
			}
			info, err := c.Do(ctx, rclient.Command{Head: []string{"INFO"}, Args: []string{"commandstats"}})
			if err != nil || !strings.Contains(fmt.Sprint(info), "cmdstat_keys:") {
				t.Fatalf("no KEYS call in commandstats (%v)", err)
			}
			if st, _ = s.Stats(ctx); st.InProgress != 1 {
				t.Fatalf("after one Complete: %d in progress, want 1", st.InProgress)
			}
		}},
		{VariantSeed002, "recovery SCANs the keyspace: it reads keys that are not the queue's", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "s", MaxRetries: 1})
			mustClaim(t, s, 1)
			clk.Advance(time.Hour)
			r, err := s.Recover(ctx, 10)
			if err != nil || len(r.Requeued) != 1 {
				t.Fatalf("Recover: %+v, %v; want the job back", r, err)
			}
			info, err := c.Do(ctx, rclient.Command{Head: []string{"INFO"}, Args: []string{"commandstats"}})
			if err != nil || !strings.Contains(fmt.Sprint(info), "cmdstat_scan:") {
				t.Fatalf("no SCAN in commandstats (%v)", err)
			}
		}},
		{VariantUnfenced, "a worker whose job was recovered still completes it (no fencing)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "u", MaxRetries: 1})
			old := mustClaim(t, s, 1)[0]
			clk.Advance(time.Hour)
			if r, err := s.Recover(ctx, 10); err != nil || len(r.Requeued) != 1 {
				t.Fatalf("Recover: %+v, %v", r, err)
			}
			mustClaim(t, s, 1)
			if err := s.Complete(ctx, old.Lease, []byte("stale")); err != nil {
				t.Fatalf("stale Complete: %v, want accepted (the seeds' unfenced update)", err)
			}
		}},
	} {
		t.Run(tc.variant+": "+tc.what, func(t *testing.T) {
			clk := clock.NewManual(start)
			tc.check(t, build(t, tc.variant, clk), clk)
		})
	}
}
