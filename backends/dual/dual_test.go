package dual

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func newStore(t *testing.T, c rclient.Client, clk clock.Clock, mover string) *Store {
	t.Helper()
	s, err := NewWith(context.Background(), c, jobstore.Options{Queue: "t-" + mover, Clock: clk}, Config{Mover: mover})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claimAll(t *testing.T, s *Store, max int) []string {
	t.Helper()
	var got []string
	for {
		cl, err := s.Claim(context.Background(), jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(cl) == 0 {
			return got
		}
		for _, c := range cl {
			got = append(got, c.Job.ID)
		}
	}
}

// Many movers at once promote each due job exactly once, in RunAt then
// enqueue order, and nothing is left behind.
func TestConcurrentMoversPromoteOnce(t *testing.T) {
	c := basetest.Client(t)
	clk := clock.NewManual(time.Now())
	s := newStore(t, c, clk, MoverBackground)
	ctx := context.Background()
	var want []string
	for b := range 3 {
		var batch []jobstore.NewJob
		for i := range 100 {
			id := fmt.Sprintf("m%d-%02d-%d", 2-b, i%7, i) // ids not in enqueue order
			want = append(want, id)
			batch = append(batch, jobstore.NewJob{ID: id, RunAt: clk.Now().Add(time.Second)})
		}
		if err := s.Enqueue(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		moved int
	)
	for range 8 {
		wg.Go(func() {
			for {
				n, err := s.Promote(ctx, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
				mu.Lock()
				moved += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if moved != len(want) {
		t.Errorf("movers report %d promotions, want %d", moved, len(want))
	}
	v, err := c.Do(ctx, rclient.Cmd("XRANGE", s.Ready, "-", "+"))
	if err != nil {
		t.Fatal(err)
	}
	var inStream []string
	for _, e := range v.([]any) {
		f := e.([]any)[1].([]any)
		inStream = append(inStream, f[1].(string))
	}
	if !slices.Equal(inStream, want) {
		t.Errorf("stream holds %d entries, want each of the %d jobs once in enqueue order", len(inStream), len(want))
	}
	if st, _ := s.Stats(ctx); st.Due != int64(len(want)) || st.Delayed != 0 {
		t.Errorf("Stats %+v, want %d due", st, len(want))
	}
	if got := claimAll(t, s, 50); !slices.Equal(got, want) {
		t.Errorf("claimed %d jobs, want all %d once, in enqueue order", len(got), len(want))
	}
}

// In background mode Claim does not promote; in claim mode it does.
func TestMoverModes(t *testing.T) {
	c := basetest.Client(t)
	clk := clock.NewManual(time.Now())
	ctx := context.Background()
	for _, mode := range []string{MoverBackground, MoverClaim} {
		s := newStore(t, c, clk, mode)
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: "j-" + mode, RunAt: clk.Now().Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
		if st, _ := s.Stats(ctx); st.Due != 1 || st.Delayed != 0 {
			t.Errorf("%s: Stats %+v: a due job still in the ZSET counts as Due", mode, st)
		}
		got := claimAll(t, s, 10)
		if mode == MoverBackground {
			if len(got) != 0 {
				t.Errorf("background: Claim promoted %v by itself", got)
			}
			if n, err := s.Promote(ctx, 10); n != 1 || err != nil {
				t.Fatalf("background: Promote = %d, %v", n, err)
			}
			got = claimAll(t, s, 10)
		}
		if !slices.Equal(got, []string{"j-" + mode}) {
			t.Errorf("%s: claimed %v", mode, got)
		}
	}
}

// A due job enqueued at the very millisecond a delayed job of the same RunAt
// falls due queues behind it (FIFO among equal RunAt), not in the stream ahead.
func TestEqualRunAtQueuesBehindDelayed(t *testing.T) {
	c := basetest.Client(t)
	clk := clock.NewManual(time.Now())
	s := newStore(t, c, clk, MoverBackground)
	ctx := context.Background()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "first", RunAt: clk.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "second"}); err != nil {
		t.Fatal(err)
	}
	j, err := s.Get(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(j.Ref, ":second") {
		t.Errorf("second's Ref %q, want a delayed member (queued behind first)", j.Ref)
	}
	if n, err := s.Promote(ctx, 10); n != 2 || err != nil {
		t.Fatalf("Promote = %d, %v", n, err)
	}
	if got := claimAll(t, s, 10); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("claimed %v, want [first second]", got)
	}
}

// In claim mode a blocked Claim wakes when a delayed job falls due, with
// no mover loop running.
func TestClaimModeWakesAtRunAt(t *testing.T) {
	c := basetest.Client(t)
	s := newStore(t, c, clock.Real{}, MoverClaim)
	ctx := context.Background()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "soon", RunAt: time.Now().Add(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute, Wait: 40 * time.Second})
	el := time.Since(start)
	if err != nil || len(cl) != 1 {
		t.Fatalf("Claim = %v, %v", cl, err)
	}
	// The upper bound tells "woken when due" from "waited out the 40s wait";
	// how close to 300ms belongs to the scenarios.
	if el < 250*time.Millisecond || el > 20*time.Second {
		t.Errorf("Claim returned after %v, want about 300ms", el)
	}
}

func TestParseConfig(t *testing.T) {
	if c, err := ParseConfig(map[string]string{OptionMover: "background", OptionBatch: "7"}); err != nil || c != (Config{Mover: MoverBackground, Batch: 7}) {
		t.Errorf("ParseConfig = %+v, %v", c, err)
	}
	for _, bad := range []map[string]string{{OptionMover: "cron"}, {OptionBatch: "0"}, {OptionBatch: "1001"}, {OptionBatch: "x"}} {
		_, err := ParseConfig(bad)
		for k := range bad {
			if !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), k) {
				t.Errorf("ParseConfig(%v) = %v, want ErrInvalid naming %q", bad, err, k)
			}
		}
	}
	if _, err := NewWith(context.Background(), nil, jobstore.Options{}, Config{Batch: base.MaxClaim + 1}); !errors.Is(err, jobstore.ErrInvalid) {
		t.Errorf("NewWith(Batch %d) = %v, want ErrInvalid", base.MaxClaim+1, err)
	}
}

// The suite's table builds dual with its defaults (mover in Claim); this
// runs the whole suite again with the background mover, where only the
// suite's Promote calls make delayed jobs claimable.
func TestConformanceBackground(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance variant is long")
	}
	newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
		return NewWith(ctx, c, o, Config{Mover: MoverBackground})
	}
	conformance.Run(t, []conformance.Backend{{Name: "dual-background", New: conformance.Adapt(newStore)}},
		basetest.Targets(t), rclient.Names())
}
