package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

var queueSeq atomic.Int64

// fixture is a store on the standalone server with a manual clock set to
// the start of a 10s window, so the test knows which bucket a time falls in.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	c     rclient.Client
	clk   *clock.Manual
	start time.Time // a bucket boundary
	opts  jobstore.Options
	s     *bucket.Store
}

const width = 10 * time.Second

func newFixture(t *testing.T, cfg bucket.Config) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c := basetest.Client(t)
	start := time.UnixMilli((time.Now().UnixMilli()/width.Milliseconds() + 1) * width.Milliseconds())
	clk := clock.NewManual(start)
	o := jobstore.Options{Queue: fmt.Sprintf("bucket-test-%d-%d", time.Now().UnixNano()%1e6, queueSeq.Add(1)), Clock: clk}
	s, err := bucket.NewWith(ctx, c, o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, c: c, clk: clk, start: start, opts: o, s: s}
}

func (f *fixture) enqueue(id string, runAt time.Time) {
	f.t.Helper()
	if err := f.s.Enqueue(f.ctx, jobstore.NewJob{ID: id, RunAt: runAt}); err != nil {
		f.t.Fatalf("Enqueue(%s): %v", id, err)
	}
}

func (f *fixture) claim(max int) []string {
	f.t.Helper()
	cl, err := f.s.Claim(f.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: time.Hour})
	if err != nil {
		f.t.Fatalf("Claim: %v", err)
	}
	ids := make([]string, len(cl))
	for i, c := range cl {
		ids[i] = c.Job.ID
	}
	return ids
}

func (f *fixture) promote(max int) int {
	f.t.Helper()
	n, err := f.s.Promote(f.ctx, max)
	if err != nil {
		f.t.Fatalf("Promote: %v", err)
	}
	return n
}

func (f *fixture) key(name string) string { return "ae:{" + f.opts.Queue + "}:" + name }

// index returns the bucket index as key -> score.
func (f *fixture) index() map[string]string {
	f.t.Helper()
	v, err := f.c.Do(f.ctx, rclient.Cmd("ZRANGE", f.key("buckets"), "0", "-1", "WITHSCORES"))
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	switch r := v.(type) {
	case []any: // RESP3: [member, score] pairs; RESP2: flat
		for i := 0; i < len(r); i++ {
			if p, ok := r[i].([]any); ok {
				out[fmt.Sprint(p[0])] = score(p[1])
				continue
			}
			out[fmt.Sprint(r[i])] = score(r[i+1])
			i++
		}
	}
	return out
}

// score prints a ZSET score the same whichever protocol returned it.
func score(v any) string {
	if x, ok := v.(float64); ok {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func (f *fixture) bucketOf(t time.Time) string {
	ms := t.UnixMilli()
	return f.key(fmt.Sprintf("bucket:%d", ms-ms%width.Milliseconds()))
}

func (f *fixture) wantIndex(want map[string]time.Time, when string) {
	f.t.Helper()
	got := f.index()
	w := map[string]string{}
	for k, t := range want {
		w[k] = fmt.Sprint(t.UnixMilli())
	}
	if fmt.Sprint(got) != fmt.Sprint(w) {
		f.t.Errorf("%s: bucket index %v, want %v", when, got, w)
	}
}

func (f *fixture) wantStats(due, delayed int64, when string) {
	f.t.Helper()
	st, err := f.s.Stats(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if st.Due != due || st.Delayed != delayed {
		f.t.Errorf("%s: Stats Due %d Delayed %d, want %d %d", when, st.Due, st.Delayed, due, delayed)
	}
}

// A bucket that is due does not make its jobs due: a job whose RunAt is
// still ahead stays in the bucket, unclaimable, until its own time.
func TestDueBucketKeepsJobsNotYetDue(t *testing.T) {
	f := newFixture(t, bucket.Config{Width: width})
	T := f.start
	f.enqueue("a", T.Add(time.Second))
	f.enqueue("b", T.Add(5*time.Second))
	b := f.bucketOf(T)
	f.wantIndex(map[string]time.Time{b: T.Add(time.Second)}, "after enqueue")
	f.wantStats(0, 2, "before anything is due")

	f.clk.Set(T.Add(time.Second))
	if got := f.claim(10); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("at T+1s claimed %v, want [a] (b is in the same, due, bucket but due at T+5s)", got)
	}
	f.wantIndex(map[string]time.Time{b: T.Add(5 * time.Second)}, "after a was promoted")
	f.wantStats(0, 1, "at T+1s")

	// A Cancel leaves the bucket's score early (a lower bound): the mover
	// then visits a due-looking bucket whose jobs are not due.
	f.enqueue("c", T.Add(3*time.Second))
	if err := f.s.Cancel(f.ctx, "c"); err != nil {
		t.Fatal(err)
	}
	f.wantIndex(map[string]time.Time{b: T.Add(3 * time.Second)}, "after c was enqueued and canceled")
	f.clk.Set(T.Add(4 * time.Second))
	f.wantStats(0, 1, "at T+4s, bucket looks due")
	if n := f.promote(100); n != 0 {
		t.Errorf("Promote at T+4s moved %d jobs, want 0 (b is due at T+5s)", n)
	}
	f.wantIndex(map[string]time.Time{b: T.Add(5 * time.Second)}, "after the mover's visit")
	f.clk.Set(T.Add(5*time.Second - time.Millisecond))
	if got := f.claim(10); len(got) != 0 {
		t.Fatalf("at T+4.999s claimed %v, want nothing", got)
	}
	f.clk.Set(T.Add(5 * time.Second))
	if got := f.claim(10); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("at T+5s claimed %v, want [b]", got)
	}
	f.wantIndex(map[string]time.Time{}, "after the bucket emptied")
	f.wantStats(0, 0, "at the end")
}

// With a background mover, Claim does not overtake a due job its mover has
// not promoted yet: FIFO holds across the bucket and ready.
func TestBackgroundClaimWaitsForMover(t *testing.T) {
	f := newFixture(t, bucket.Config{Width: width, Mover: bucket.MoverBackground})
	T := f.start
	f.enqueue("x", T.Add(time.Second))
	f.clk.Set(T.Add(2 * time.Second))
	f.enqueue("y", time.Time{}) // due now: straight into ready
	f.wantStats(2, 0, "x due in its bucket, y ready")
	if got := f.claim(10); len(got) != 0 {
		t.Fatalf("Claim before the mover ran returned %v, want nothing (y must not overtake x)", got)
	}
	if n := f.promote(100); n != 1 {
		t.Fatalf("Promote moved %d, want 1", n)
	}
	if got := f.claim(10); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("Claim after Promote returned %v, want [x y]", got)
	}
}

// Many movers at once promote each job exactly once, and never early.
func TestConcurrentMoversPromoteOnce(t *testing.T) {
	f := newFixture(t, bucket.Config{Width: 10 * time.Millisecond, Mover: bucket.MoverBackground})
	const n, movers = 600, 8
	T := f.start
	runAt := map[string]time.Time{}
	var batch []jobstore.NewJob
	for i := range n {
		id := fmt.Sprintf("m%03d", i)
		runAt[id] = T.Add(time.Duration(1+rand.IntN(3000)) * time.Millisecond)
		batch = append(batch, jobstore.NewJob{ID: id, RunAt: runAt[id]})
		if len(batch) == 100 {
			if err := f.s.Enqueue(f.ctx, batch...); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	var claimed []string
	for _, at := range []time.Duration{1500 * time.Millisecond, 3 * time.Second} {
		f.clk.Set(T.Add(at))
		wantDue := 0
		for _, r := range runAt {
			if !r.After(T.Add(at)) {
				wantDue++
			}
		}
		var total atomic.Int64
		var wg sync.WaitGroup
		for range movers {
			wg.Go(func() {
				for {
					k, err := f.s.Promote(f.ctx, 7)
					if err != nil {
						t.Errorf("Promote: %v", err)
						return
					}
					if k == 0 {
						return
					}
					total.Add(int64(k))
				}
			})
		}
		wg.Wait()
		total.Add(int64(f.promote(1000)))
		if got := int(total.Load()) + len(claimed); got != wantDue {
			t.Errorf("at T+%v: movers reported %d promotions (+%d claimed before), want %d due jobs", at, total.Load(), len(claimed), wantDue)
		}
		for {
			got := f.claim(100)
			if len(got) == 0 {
				break
			}
			claimed = append(claimed, got...)
		}
		if len(claimed) != wantDue {
			t.Errorf("at T+%v: claimed %d jobs, want %d", at, len(claimed), wantDue)
		}
		for _, id := range claimed {
			if runAt[id].After(T.Add(at)) {
				t.Errorf("at T+%v: claimed %s, due only at T+%v", at, id, runAt[id].Sub(T))
			}
		}
	}
	seen := map[string]bool{}
	for i, id := range claimed {
		if seen[id] {
			t.Errorf("job %s claimed twice", id)
		}
		seen[id] = true
		if i > 0 && runAt[id].Before(runAt[claimed[i-1]]) {
			t.Errorf("claim order: %s (T+%v) after %s (T+%v)", id, runAt[id].Sub(T), claimed[i-1], runAt[claimed[i-1]].Sub(T))
		}
	}
	if len(seen) != n {
		t.Errorf("claimed %d distinct jobs, want %d", len(seen), n)
	}
	f.wantIndex(map[string]time.Time{}, "after all jobs moved")
	f.wantStats(0, 0, "after all jobs moved")
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		extra map[string]string
		key   string // "" when valid
	}{
		{map[string]string{}, ""},
		{map[string]string{"width": "250ms", "mover": "background"}, ""},
		{map[string]string{"width": "2s", "mover": "claim"}, ""},
		{map[string]string{"width": "0s"}, "width"},
		{map[string]string{"width": "-1s"}, "width"},
		{map[string]string{"width": "500us"}, "width"},
		{map[string]string{"width": "1500us"}, "width"},
		{map[string]string{"width": "soon"}, "width"},
		{map[string]string{"width": ""}, "width"},
		{map[string]string{"mover": "sometimes"}, "mover"},
		{map[string]string{"mover": ""}, "mover"},
	} {
		_, err := bucket.ParseConfig(tc.extra)
		switch {
		case tc.key == "" && err != nil:
			t.Errorf("ParseConfig(%v): %v", tc.extra, err)
		case tc.key != "" && !errors.Is(err, jobstore.ErrInvalid):
			t.Errorf("ParseConfig(%v) = %v, want ErrInvalid", tc.extra, err)
		case tc.key != "" && !strings.Contains(err.Error(), "option "+tc.key):
			t.Errorf("ParseConfig(%v) = %q, want it to name option %s", tc.extra, err, tc.key)
		case tc.key == "mover" && !strings.Contains(err.Error(), `"claim" and "background"`):
			t.Errorf("ParseConfig(%v) = %q, want it to list the allowed values", tc.extra, err)
		}
	}
	if _, err := bucket.NewWith(context.Background(), nil, jobstore.Options{}, bucket.Config{Width: -time.Second}); !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), "width") {
		t.Errorf("NewWith(Width -1s) = %v, want ErrInvalid naming width", err)
	}

	// Through the registry, as a scenario file would set them.
	c := basetest.Client(t)
	b, err := registry.Lookup("bucket")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		extra map[string]string
		want  string
	}{{map[string]string{"width": "0"}, "width"}, {map[string]string{"mover": "cron"}, "mover"}, {map[string]string{"size": "1s"}, "size"}} {
		if _, err := b.Build(ctx, c, jobstore.Options{Queue: "bucket-opts"}, tc.extra); !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("registry Build(%v) = %v, want ErrInvalid naming %q", tc.extra, err, tc.want)
		}
	}
	s, err := b.Build(ctx, c, jobstore.Options{Queue: "bucket-opts"}, map[string]string{"width": "100ms", "mover": "background"})
	if err != nil {
		t.Fatalf("registry Build with good options: %v", err)
	}
	if _, ok := s.(jobstore.Mover); !ok || !s.Capabilities().Has(jobstore.CapMover) {
		t.Errorf("bucket store: Mover %v, capabilities %v", ok, s.Capabilities())
	}
	_ = s.Close()
}

// The suite's table builds bucket with its defaults (mover "claim", width
// 1s); this runs the whole suite again with the other mover and narrow
// buckets, so that jobs spread over many buckets.
func TestConformanceBackgroundNarrow(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance variant is long")
	}
	targets := basetest.Targets(t)
	newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (*bucket.Store, error) {
		return bucket.NewWith(ctx, c, o, bucket.Config{Width: 50 * time.Millisecond, Mover: bucket.MoverBackground})
	}
	conformance.Run(t, []conformance.Backend{{Name: "bucket-background-50ms", New: conformance.Adapt(newStore)}},
		targets, rclient.Names())
}
