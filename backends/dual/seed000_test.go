package dual

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func newSeed000(t *testing.T, c rclient.Client, clk clock.Clock, queue, mover string) *Seed000 {
	t.Helper()
	st, err := Build(context.Background(), c, jobstore.Options{Queue: queue, Clock: clk, PollInterval: time.Millisecond},
		map[string]string{base.OptionVariant: VariantSeed000, OptionMover: mover})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*Seed000)
}

func audit(t *testing.T, s jobstore.Store) map[string]int64 {
	t.Helper()
	m, err := s.(jobstore.Auditor).Audit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSeed000Fidelity checks what sets seed 000 apart, each against the
// seed's lines (see Seed000): a second entry of a job that a claimer holds
// is refused (ALREADY_ASSIGNED) and left pending, not run twice; a delayed
// job is scored in whole seconds, promoted early and put back by the claim;
// its tracking entry is bounced; and approach 2's mover drops a job due
// within its five-second look-ahead.
func TestSeed000Fidelity(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	claim := func(s jobstore.Store) []jobstore.Claimed {
		t.Helper()
		cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}

	t.Run("second entry refused and left pending", func(t *testing.T) {
		clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
		s := newSeed000(t, c, clk, "s0-refuse", MoverClaim)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		if cl := claim(s); len(cl) != 1 || cl[0].Job.WorkerID != "w" {
			t.Fatalf("first claim: %+v", cl)
		}
		// A second mover's XADD of the same job (what two movers do).
		if _, err := s.Run(ctx, scriptSeed000Add, []string{s.Ready, s.Keys.Job("a")}, []string{"a", "0"}); err != nil {
			t.Fatal(err)
		}
		if cl := claim(s); len(cl) != 0 {
			t.Fatalf("the seed's claim refuses a job whose WorkerId is set; got %d jobs", len(cl))
		}
		a := audit(t, s)
		if a[AuditRefusedClaims] != 1 || a[base.AuditPending] != 1 {
			t.Fatalf("audit %v: want 1 refused claim and its entry still pending", a)
		}
	})

	t.Run("two movers add a job twice", func(t *testing.T) {
		start := time.UnixMilli(1_700_000_000_000)
		clk := clock.NewManual(start)
		s := newSeed000(t, c, clk, "s0-twice", MoverClaim)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "t", RunAt: start.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		clk.Set(start.Add(2 * time.Second))
		// A second mover reads, removes and adds the job between the first
		// one's read and its ZREM; the first then adds it again.
		s.afterRead = func() {
			s.afterRead = nil
			if n, err := s.move(ctx, false); err != nil || n != 1 {
				t.Errorf("second mover: %d, %v; want 1 moved", n, err)
			}
		}
		if n, err := s.move(ctx, false); err != nil || n != 1 {
			t.Fatalf("first mover: %d, %v; want 1 added though its ZREM removed nothing (line 233)", n, err)
		}
		if n := queuedEntries(t, c, s.Ready, "t"); n != 2 {
			t.Fatalf("%d queued entries of the job in the stream; want 2", n)
		}
		if a := audit(t, s); a[AuditDuplicateEntries] != 1 {
			t.Fatalf("audit %v: want 1 duplicate entry", a)
		}
	})

	t.Run("a mover crash between ZREM and XADD drops the job", func(t *testing.T) {
		start := time.UnixMilli(1_700_000_000_000)
		clk := clock.NewManual(start)
		cc := faults.NewCrashClient(c)
		st, err := Build(ctx, cc, jobstore.Options{Queue: "s0-drop", Clock: clk, PollInterval: time.Millisecond},
			map[string]string{base.OptionVariant: VariantSeed000, OptionMover: MoverBackground, OptionSeedMover: SeedApproach1})
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Seed000)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "z", RunAt: start.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		clk.Set(start.Add(2 * time.Second))
		// The mover's process dies after two commands: its read and the
		// ZREM (lines 207, 222); the XADD (233) never goes.
		cc.Arm(2)
		cc.Begin()
		if n, err := s.Promote(ctx, 100); !errors.Is(err, faults.ErrCrashed) || n != 0 {
			t.Fatalf("Promote: %d, %v; want the crash between the ZREM and the XADD", n, err)
		}
		if n, err := s.Promote(ctx, 100); err != nil || n != 0 {
			t.Fatalf("the next mover: %d, %v; want nothing left to move", n, err)
		}
		if n := queuedEntries(t, c, s.Ready, "z"); n != 0 {
			t.Fatalf("%d queued entries of the job; want none: it is in no queue", n)
		}
		if j, err := s.Get(ctx, "z"); err != nil || j.Status != jobstore.StatusScheduled {
			t.Fatalf("record %v (%v): want Scheduled, stranded", j.Status, err)
		}
	})

	t.Run("whole seconds, tracking entry, early promotion", func(t *testing.T) {
		start := time.UnixMilli(1_700_000_000_200)
		clk := clock.NewManual(start)
		s := newSeed000(t, c, clk, "s0-early", MoverClaim)
		runAt := start.Add(1500 * time.Millisecond) // ...01.700, scored ...01.000
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "d", RunAt: runAt}); err != nil {
			t.Fatal(err)
		}
		score, err := c.Do(ctx, rclient.Cmd("ZSCORE", s.delayed, "d"))
		if f, _ := score.(float64); err != nil || f != 1_700_000_001_000 {
			t.Fatalf("score %v (%v): want RunAt in whole seconds, 1700000001000", score, err)
		}
		if cl := claim(s); len(cl) != 0 { // reads the tracking entry: Scheduled, not due
			t.Fatalf("claimed %d before any is due", len(cl))
		}
		clk.Set(start.Add(900 * time.Millisecond)) // ...01.100: mover reads score <= 1s
		if cl := claim(s); len(cl) != 0 {
			t.Fatalf("claimed %d 600ms before RunAt", len(cl))
		}
		clk.Set(runAt)
		if cl := claim(s); len(cl) != 1 {
			t.Fatalf("at RunAt: claimed %d, want 1", len(cl))
		}
		a := audit(t, s)
		if a[AuditTrackingEntries] != 1 || a[AuditTrackingBounced] != 1 || a[AuditEarlyPromotions] != 1 {
			t.Fatalf("audit %v: want 1 tracking entry bounced and 1 early promotion", a)
		}
	})

	t.Run("approach 2 drops a job not yet due", func(t *testing.T) {
		start := time.UnixMilli(1_700_000_000_000)
		clk := clock.NewManual(start)
		s := newSeed000(t, c, clk, "s0-ahead", MoverBackground)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "x", RunAt: start.Add(3 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		if cl := claim(s); len(cl) != 0 { // the tracking entry: not due, put back (line 120)
			t.Fatalf("claimed %d before RunAt", len(cl))
		}
		if n, err := s.Promote(ctx, 100); err != nil || n != 0 {
			t.Fatalf("Promote: %d, %v; want 0 moved", n, err)
		}
		clk.Set(start.Add(10 * time.Second))
		if n, err := s.Promote(ctx, 100); err != nil || n != 0 {
			t.Fatalf("Promote after RunAt: %d, %v; want 0: the job is in no queue", n, err)
		}
		if cl := claim(s); len(cl) != 0 {
			t.Fatalf("claimed %d: the job should be in no queue", len(cl))
		}
		j, err := s.Get(ctx, "x")
		if err != nil || j.Status != jobstore.StatusScheduled {
			t.Fatalf("record %v (%v): want Scheduled, stranded", j.Status, err)
		}
		if a := audit(t, s); a[AuditDroppedNotDue] != 1 {
			t.Fatalf("audit %v: want 1 dropped", a)
		}
	})
}

// queuedEntries counts the stream's entries of job id that are not its
// tracking entry (status "delayed").
func queuedEntries(t *testing.T, c rclient.Client, stream, id string) int {
	t.Helper()
	v, err := c.Do(context.Background(), rclient.Cmd("XRANGE", stream, "-", "+"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	entries, _ := v.([]any)
	for _, e := range entries {
		kv := base.Strings(e.([]any)[1])
		f := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			f[kv[i]] = kv[i+1]
		}
		if f["id"] == id && f["status"] != "delayed" {
			n++
		}
	}
	return n
}
