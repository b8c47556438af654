package zset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
		{VariantSeed001, "claimers that read the same head collide: the head read outside Lua (seed 003 lines 37-44), the claim of that id refused (seed 001 lines 317-319)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "h1"}, jobstore.NewJob{ID: "h2"})
			st := s.(*Seed001)
			// A second claimer reads the head and claims it between this
			// claimer's read and its script.
			st.afterRead = func() {
				st.afterRead = nil
				if cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w2", Max: 1, Lease: time.Second}); err != nil || len(cl) != 1 || cl[0].Job.ID != "h1" {
					t.Errorf("second claimer: %+v, %v; want h1", cl, err)
				}
			}
			cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Second})
			if !errors.Is(err, ErrClaimConflict) {
				t.Fatalf("claim of the head another claimer took: %+v, %v; want ErrClaimConflict though h2 waits", cl, err)
			}
		}},
		{VariantSeed001Reply, "every claim fails after claiming: the reply holds WorkerId where the parser reads CreatedAt (lines 355-360 against 412-420)", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "m", MaxRetries: 2})
			cl, err := claim(t, s)
			if !errors.Is(err, ErrJobConstruction) || len(cl) != 0 || !strings.Contains(err.Error(), "CreatedAt") {
				t.Fatalf("claim: %d jobs, %v; want ErrJobConstruction on CreatedAt", len(cl), err)
			}
			// The script ran: the job is InProgress and out of the queue,
			// claimed by a worker that never got it.
			if l := locate(t, s, "m"); !l.Found || l.Status != jobstore.StatusInProgress {
				t.Fatalf("Locate %+v: want InProgress", l)
			}
			if n, err := c.Do(ctx, rclient.Cmd("ZCARD", s.(*Seed001).queue)); err != nil || base.Int(n) != 0 {
				t.Fatalf("queue holds %v (%v) after the failed claim; want 0", n, err)
			}
		}},
		{VariantSeed004, "the pop takes the id out before work: after a crash nothing takes it back", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "p"})
			mustClaim(t, s, 1)
			// The pop script removed the id before any work: the queue
			// holds nothing a reclaim could find.
			if n, err := c.Do(ctx, rclient.Cmd("ZCARD", s.(*Seed004).queue)); err != nil || base.Int(n) != 0 {
				t.Fatalf("queue holds %v (%v) after the pop; want 0", n, err)
			}
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
			before := cmdCalls(t, c, "keys")
			if st, _ = s.Stats(ctx); st.InProgress != 1 {
				t.Fatalf("after one Complete: %d in progress, want 1", st.InProgress)
			}
			if n := cmdCalls(t, c, "keys") - before; n < 1 {
				t.Fatalf("Stats made %d KEYS calls; want the seed's KEYS processing:*", n)
			}
		}},
		{VariantSeed002, "recovery SCANs the whole keyspace, a step of COUNT 100 at a time until the cursor is 0 (seed 002 lines 260-263, 310): its steps grow with the keys that are not the queue's", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "s", MaxRetries: 1})
			mustClaim(t, s, 1)
			clk.Advance(time.Hour)
			const filler = 3000 // keys of no queue: 30 SCAN steps of COUNT 100
			fill(t, c, "fid-filler:", filler)
			before := cmdCalls(t, c, "scan")
			r, err := s.Recover(ctx, 10)
			if err != nil || len(r.Requeued) != 1 {
				t.Fatalf("Recover: %+v, %v; want the job back", r, err)
			}
			if steps := cmdCalls(t, c, "scan") - before; steps < filler/100/2 {
				t.Fatalf("Recover made %d SCAN steps over at least %d keys; want one per ~100 keys (the whole keyspace walked)", steps, filler)
			}
		}},
		{VariantSeed002Formats, "recovery writes Unix seconds into the dates seed 001 parses (seed 002 lines 283-291; seed 001 lines 84, 89): a job it dead-letters can never be read", func(t *testing.T, s jobstore.Store, clk *clock.Manual) {
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "d"}) // no retry: recovery dead-letters it
			_ = s.Enqueue(ctx, jobstore.NewJob{ID: "ok"})
			mustClaim(t, s, 2)
			clk.Advance(time.Hour)
			if r, err := s.Recover(ctx, 10); err != nil || len(r.DeadLettered) != 2 {
				t.Fatalf("Recover: %+v, %v; want both dead-lettered", r, err)
			}
			if _, err := s.Get(ctx, "d"); !errors.Is(err, ErrUnreadable) {
				t.Fatalf("Get: %v; want seed 001's HashToJob to throw (ErrUnreadable)", err)
			}
			if a, err := s.(jobstore.Auditor).Audit(ctx); err != nil || a[AuditUnreadable] != 2 {
				t.Fatalf("audit %v, %v; want 2 unreadable dead-lettered records", a, err)
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

// cmdCalls is how many times Redis ran cmd, from INFO commandstats: a
// test reads it before and after the call it checks, as other tests share
// the server.
func cmdCalls(t *testing.T, c rclient.Client, cmd string) int64 {
	t.Helper()
	info, err := c.Do(context.Background(), rclient.Command{Head: []string{"INFO"}, Args: []string{"commandstats"}})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := info.(string)
	_, rest, ok := strings.Cut(text, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(rest[:strings.IndexAny(rest, ",\r\n")], 10, 64)
	return n
}

// fill writes n keys under prefix, deleted when t ends.
func fill(t *testing.T, c rclient.Client, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("%s%d", prefix, i))
	}
	for b := range slices.Chunk(keys, 500) {
		args := make([]string, 0, 2*len(b))
		for _, k := range b {
			args = append(args, k, "x")
		}
		if _, err := c.Do(ctx, rclient.Command{Head: []string{"MSET"}, Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for b := range slices.Chunk(keys, 500) {
			_, _ = c.Do(ctx, rclient.Command{Head: []string{"DEL"}, Args: b})
		}
	})
}
