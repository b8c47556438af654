package bucket

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// TestSeed000Fidelity holds the variant to seed 000's approach 3 (its doc
// cites the lines): the mutants of mutants/ remove one mechanism each.
func TestSeed000Fidelity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := basetest.Client(t)
	start := time.UnixMilli((time.Now().UnixMilli()/Seed000Width.Milliseconds() + 1) * Seed000Width.Milliseconds())
	build := func(t *testing.T) (*Seed000, *clock.Manual) {
		t.Helper()
		clk := clock.NewManual(start)
		st, err := Build(ctx, c, jobstore.Options{Queue: fmt.Sprintf("fid-bucket-seed000-%d", time.Now().UnixNano()), Clock: clk},
			map[string]string{base.OptionVariant: VariantSeed000})
		if err != nil {
			t.Fatal(err)
		}
		return st.(*Seed000), clk
	}
	t.Run("jobs of one bucket share its fields: only the last one runs (lines 482-494)", func(t *testing.T) {
		s, clk := build(t)
		for i, id := range []string{"a", "b", "c"} {
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: id, RunAt: start.Add(time.Duration(i+1) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Minute)
		if _, err := s.Promote(ctx, 100); err != nil {
			t.Fatal(err)
		}
		var ran []string
		for {
			cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(cl) == 0 {
				break
			}
			for _, j := range cl {
				ran = append(ran, j.Job.ID)
			}
		}
		if len(ran) != 1 || ran[0] != "c" {
			t.Fatalf("claimed %v; want [c]: the bucket kept only its last job", ran)
		}
		locs, err := s.Locate(ctx, []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range locs {
			if !l.Found || l.Status != jobstore.StatusQueued || l.Reachable {
				t.Errorf("job %d: %+v; want Queued (the corrected record of a delayed job) and in no queue", i, l)
			}
		}
		if a, err := s.Audit(ctx); err != nil || a[AuditBucketOverwrites] != 2 {
			t.Errorf("audit %v (%v): want %s 2", a, err, AuditBucketOverwrites)
		}
	})
	t.Run("the job a bucket's jobId holds is reachable, the one it overwrote is not", func(t *testing.T) {
		s, _ := build(t)
		for i, id := range []string{"a", "c"} {
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: id, RunAt: start.Add(time.Duration(i+1) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		if l, err := s.Locate(ctx, []string{"a", "c"}); err != nil || l[0].Reachable || !l[1].Reachable {
			t.Fatalf("Locate a, c before the mover: %+v, %v; want a in no queue, c in the bucket's jobId", l, err)
		}
	})
	t.Run("the mover adds every field's value, timestamps too (lines 518-527)", func(t *testing.T) {
		s, clk := build(t)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "x", RunAt: start.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		n, err := s.Promote(ctx, 100)
		if err != nil || n != 3 {
			t.Fatalf("Promote: %d, %v; want 3 (jobId, delayUntil, addedAt)", n, err)
		}
		if v, err := c.Do(ctx, rclient.Cmd("ZCARD", s.ready)); err != nil || base.Int(v) != 3 {
			t.Fatalf("ready holds %v (%v); want 3", v, err)
		}
		if a, err := s.Audit(ctx); err != nil || a[AuditBogusEntries] != 2 {
			t.Errorf("audit %v (%v): want %s 2", a, err, AuditBogusEntries)
		}
	})
}
