package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

// TestSeed003Fidelity checks what sets each seed 003 variant apart:
// seed003 acknowledges the entry in its claim, so after a crash neither
// the PEL nor Recover brings the job back; seed003-maxlen's XADD MAXLEN
// deletes entries the group has not read, so their jobs are in no queue.
func TestSeed003Fidelity(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	build := func(queue string, opts map[string]string) jobstore.Store {
		t.Helper()
		s, err := Build(ctx, c, jobstore.Options{Queue: queue, Clock: clk, PollInterval: time.Millisecond}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("seed003: XACK at claim", func(t *testing.T) {
		s := build("s3-xack", map[string]string{base.OptionVariant: VariantSeed003})
		_ = s.Enqueue(ctx, jobstore.NewJob{ID: "x", MaxRetries: 3})
		cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Second})
		if err != nil || len(cl) != 1 {
			t.Fatalf("claim: %d, %v", len(cl), err)
		}
		if a, err := s.(jobstore.Auditor).Audit(ctx); err != nil || a[base.AuditPending] != 0 {
			t.Fatalf("audit %v, %v: the claim acknowledged the entry, so the PEL holds nothing", a, err)
		}
		clk.Advance(time.Hour) // the worker is gone
		if r, err := s.Recover(ctx, 10); err != nil || len(r.Requeued) != 0 {
			t.Fatalf("Recover: %+v, %v; want nothing to take back", r, err)
		}
		l, err := s.(jobstore.Locator).Locate(ctx, []string{"x"})
		if err != nil || l[0].Reachable {
			t.Fatalf("Locate %+v, %v: want in progress and unreachable", l, err)
		}
	})

	// Seed 003 lines 192-196: an entry the claim refuses is never
	// acknowledged. A job created twice (CreateJob has no check) has a
	// second entry, which the claim refuses once the first is claimed; the
	// corrected store refuses the second create instead.
	t.Run("seed003: refused entry stays pending", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			opts    map[string]string
			pending int64
		}{{"seed003", map[string]string{base.OptionVariant: VariantSeed003}, 1}, {"corrected", nil, 0}} {
			s := build("s3-refused-"+tc.name, tc.opts)
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: "r"}); err != nil {
				t.Fatal(err)
			}
			err := s.Enqueue(ctx, jobstore.NewJob{ID: "r"})
			if (err == nil) != (tc.pending == 1) || err != nil && !errors.Is(err, jobstore.ErrDuplicateID) {
				t.Fatalf("%s: second create: %v", tc.name, err)
			}
			cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: time.Minute})
			if err != nil || len(cl) != 1 {
				t.Fatalf("%s: claim: %d jobs, %v; want the job once", tc.name, len(cl), err)
			}
			if err := s.Complete(ctx, cl[0].Lease, nil); err != nil {
				t.Fatal(err)
			}
			if cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: time.Minute}); err != nil || len(cl) != 0 {
				t.Fatalf("%s: second claim: %d jobs, %v; want none", tc.name, len(cl), err)
			}
			if a, err := s.(jobstore.Auditor).Audit(ctx); err != nil || a[base.AuditPending] != tc.pending {
				t.Fatalf("%s: audit %v, %v; want %d pending", tc.name, a, err, tc.pending)
			}
		}
	})

	t.Run("seed003-maxlen: trimmed before read", func(t *testing.T) {
		s := build("s3-maxlen", map[string]string{base.OptionVariant: VariantSeed003MaxLen, OptionMaxLen: "100"})
		ids := make([]string, 0, 500)
		for i := range 500 {
			id := fmt.Sprintf("m%03d", i)
			ids = append(ids, id)
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		locs, err := s.(jobstore.Locator).Locate(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for _, l := range locs {
			if !l.Reachable {
				lost++
			}
		}
		if lost < 300 || !locs[0].Found || locs[0].Reachable || !locs[499].Reachable {
			t.Fatalf("%d of 500 unreachable (first %+v, last %+v): MAXLEN ~ 100 should have trimmed the oldest unread entries", lost, locs[0], locs[499])
		}
		if _, err := Build(ctx, c, jobstore.Options{Queue: "s3-bad", Clock: clk}, map[string]string{OptionMaxLen: "5"}); err == nil {
			t.Fatal("maxlen without the variant: want an error")
		}
	})
}
