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

// A claim that took a job in its first move and found nothing in its
// second (the due-looking bucket it promoted held no due job) leaves no
// waiter registered: the claimer does not block, so a job an enqueue
// handed to that registration would sit leased until its lease ran out
// (seen as a job left unfinished after a 15 s drain, under load, in
// TestRunEveryBackend).
func TestClaimThatTookJobsLeavesNoWaiter(t *testing.T) {
	f := newFixture(t, bucket.Config{Width: width})
	T := f.start
	f.enqueue("a", time.Time{}) // due now: ready, ahead of the bucket
	f.enqueue("x", T.Add(time.Second))
	f.enqueue("c", T.Add(5*time.Second)) // x's bucket, not due at T+2s
	if err := f.s.Cancel(f.ctx, "x"); err != nil {
		t.Fatal(err)
	}
	f.clk.Set(T.Add(2 * time.Second)) // the bucket looks due (x's score), c is not
	cl, err := f.s.Claim(f.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 2, Lease: time.Hour, Wait: time.Minute})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != "a" {
		t.Fatalf("Claim = %+v, %v; want [a]", cl, err)
	}
	f.enqueue("d", time.Time{})
	if got := f.claim(2); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("claimed %v after d was enqueued, want [d] (not handed to a claimer that is not waiting)", got)
	}
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
		{map[string]string{"wait": "poll", "mover": "background"}, ""},
		{map[string]string{"wait": "block"}, ""},
		{map[string]string{"wait": "spin"}, "wait"},
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
	}{{map[string]string{"width": "0"}, "width"}, {map[string]string{"mover": "cron"}, "mover"},
		{map[string]string{"wait": "busy"}, "wait"}, {map[string]string{"size": "1s"}, "size"}} {
		if _, err := b.Build(ctx, c, jobstore.Options{Queue: "bucket-opts"}, tc.extra); !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("registry Build(%v) = %v, want ErrInvalid naming %q", tc.extra, err, tc.want)
		}
	}
	s, err := b.Build(ctx, c, jobstore.Options{Queue: "bucket-opts"}, map[string]string{"width": "100ms", "mover": "background"})
	if err != nil {
		t.Fatalf("registry Build with good options: %v", err)
	}
	if _, ok := s.(jobstore.Mover); !ok || !s.Capabilities().Has(jobstore.CapMover) || !s.Capabilities().Has(jobstore.CapBlockingClaim) {
		t.Errorf("bucket store: Mover %v, capabilities %v", ok, s.Capabilities())
	}
	_ = s.Close()
	s, err = b.Build(ctx, c, jobstore.Options{Queue: "bucket-opts"}, map[string]string{"wait": "poll"})
	if err != nil {
		t.Fatalf("registry Build with wait poll: %v", err)
	}
	if s.Capabilities().Has(jobstore.CapBlockingClaim) {
		t.Errorf("registry Build with wait poll: capabilities %v", s.Capabilities())
	}
	_ = s.Close()
}

// The suite's table builds bucket with its defaults (mover "claim", width
// 1s, claims that block on the wake-up marker); this runs the whole suite
// twice more, side by side, with narrow buckets so that jobs spread over
// many: blocking claims with the background mover, and the seeds' polling
// claim, where the scripts touch no marker. Each has its own servers: the
// suite pauses its server in RedisUnreachable.
func TestConformanceVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance variants are long")
	}
	for _, v := range []struct {
		name string
		cfg  bucket.Config
	}{
		{"bucket-background-50ms", bucket.Config{Width: 50 * time.Millisecond, Mover: bucket.MoverBackground}},
		{"bucket-poll-50ms", bucket.Config{Width: 50 * time.Millisecond, Poll: true}},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			targets := basetest.Targets(t)
			newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (*bucket.Store, error) {
				return bucket.NewWith(ctx, c, o, v.cfg)
			}
			conformance.Run(t, []conformance.Backend{{Name: v.name, New: conformance.Adapt(newStore)}}, targets, rclient.Names())
		})
	}
}

// waker is a blocking store on the wall clock and a private server, for
// the wake-up tests: they measure real time.
type waker struct {
	t   *testing.T
	ctx context.Context
	c   rclient.Client
	s   *bucket.Store
	// lease is a claim that setup hands over to act.
	lease jobstore.Lease
}

func newWaker(t *testing.T, cfg bucket.Config, o jobstore.Options) *waker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	c := basetest.Client(t)
	o.Queue = fmt.Sprintf("bucket-wake-%d", queueSeq.Add(1))
	s, err := bucket.NewWith(ctx, c, o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &waker{t: t, ctx: ctx, c: c, s: s}
}

func (w *waker) enqueue(id string, runAt time.Time) {
	w.t.Helper()
	if err := w.s.Enqueue(w.ctx, jobstore.NewJob{ID: id, RunAt: runAt, MaxRetries: 3}); err != nil {
		w.t.Fatalf("Enqueue(%s): %v", id, err)
	}
}

// claimNow claims id at once, without waiting, under lease.
func (w *waker) claimNow(id string, lease time.Duration) jobstore.Lease {
	w.t.Helper()
	cl, err := w.s.Claim(w.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: lease})
	if err != nil || len(cl) != 1 || cl[0].Job.ID != id {
		w.t.Fatalf("Claim = %v, %v; want %s", cl, err, id)
	}
	return cl[0].Lease
}

// calls is how many times the server ran cmd (INFO commandstats).
func (w *waker) calls(cmd string) int {
	w.t.Helper()
	v, err := w.c.Do(w.ctx, rclient.Cmd("INFO", "commandstats"))
	if err != nil {
		w.t.Fatal(err)
	}
	_, rest, ok := strings.Cut(fmt.Sprint(v), "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
	return n
}

// In wait "block", a waiting Claim wakes as soon as a job it may take is
// placed, and otherwise no later than the queue's head (ready's, or the
// lowest bucket's) falls due; with a background mover it does not spin
// while a due bucket waits for the mover.
func TestBlockingClaimWakes(t *testing.T) {
	const width = 100 * time.Millisecond
	background := bucket.Config{Width: width, Mover: bucket.MoverBackground}
	for _, tc := range []struct {
		name string
		cfg  bucket.Config
		// setup runs before the waiting Claim starts, act once it blocks;
		// act returns when the job it expects became claimable.
		setup func(w *waker)
		act   func(w *waker) time.Time
		want  string
	}{
		{name: "due enqueue", act: func(w *waker) time.Time {
			w.enqueue("a", time.Time{})
			return time.Now()
		}, want: "a"},
		{name: "head falls due", setup: func(w *waker) {
			w.enqueue("late", time.Now().Add(time.Hour))
			w.enqueue("t", time.Now().Add(400*time.Millisecond))
		}, act: func(w *waker) time.Time {
			j, _ := w.s.Get(w.ctx, "t")
			return j.RunAt
		}, want: "t"},
		{name: "delayed enqueue into the earliest bucket", setup: func(w *waker) {
			w.enqueue("late", time.Now().Add(time.Hour))
		}, act: func(w *waker) time.Time {
			at := time.Now().Add(300 * time.Millisecond).Truncate(time.Millisecond)
			w.enqueue("soon", at)
			return at
		}, want: "soon"},
		{name: "retry into an earlier bucket", setup: func(w *waker) {
			w.enqueue("late", time.Now().Add(time.Hour))
			w.enqueue("f", time.Time{})
			w.lease = w.claimNow("f", time.Hour)
		}, act: func(w *waker) time.Time {
			r, err := w.s.Fail(w.ctx, w.lease, "boom") // retry in 300ms
			if err != nil || r.Status != jobstore.StatusScheduled {
				w.t.Fatalf("Fail = %v, %v", r, err)
			}
			return r.RunAt
		}, want: "f"},
		{name: "recover", setup: func(w *waker) {
			w.enqueue("late", time.Now().Add(time.Hour))
			w.enqueue("r", time.Time{})
			w.claimNow("r", 100*time.Millisecond)
		}, act: func(w *waker) time.Time {
			if r, err := w.s.Recover(w.ctx, 10); err != nil || !slices.Equal(r.Requeued, []string{"r"}) {
				w.t.Fatalf("Recover = %v, %v", r, err)
			}
			return time.Now()
		}, want: "r"},
		{name: "background promote", cfg: background, setup: func(w *waker) {
			w.enqueue("p", time.Now().Add(100*time.Millisecond))
		}, act: func(w *waker) time.Time {
			time.Sleep(200 * time.Millisecond) // p is due, its bucket waits for the mover
			if n, err := w.s.Promote(w.ctx, 100); n != 1 || err != nil {
				w.t.Fatalf("Promote = %d, %v", n, err)
			}
			return time.Now()
		}, want: "p"},
		{name: "background cancel of the due bucket ahead", cfg: background, setup: func(w *waker) {
			w.enqueue("x", time.Now().Add(50*time.Millisecond))
			time.Sleep(100 * time.Millisecond)
			w.enqueue("y", time.Time{}) // ready, but behind x's due bucket
		}, act: func(w *waker) time.Time {
			time.Sleep(200 * time.Millisecond)
			if err := w.s.Cancel(w.ctx, "x"); err != nil {
				w.t.Fatal(err)
			}
			return time.Now()
		}, want: "y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg
			if cfg.Width == 0 {
				cfg.Width = width
			}
			w := newWaker(t, cfg, jobstore.Options{Backoff: jobstore.Backoff{Base: 300 * time.Millisecond}})
			if !w.s.Capabilities().Has(jobstore.CapBlockingClaim) {
				t.Fatalf("capabilities %v lack %s", w.s.Capabilities(), jobstore.CapBlockingClaim)
			}
			if tc.setup != nil {
				tc.setup(w)
			}
			type res struct {
				cl  []jobstore.Claimed
				err error
				at  time.Time
			}
			ch := make(chan res, 1)
			go func() {
				cl, err := w.s.Claim(w.ctx, jobstore.ClaimRequest{WorkerID: "waiter", Max: 1, Lease: time.Hour, Wait: 3 * time.Second})
				ch <- res{cl, err, time.Now()}
			}()
			time.Sleep(200 * time.Millisecond)
			before := w.calls("bzpopmin")
			due := tc.act(w)
			r := <-ch
			if r.err != nil || len(r.cl) != 1 || r.cl[0].Job.ID != tc.want {
				t.Fatalf("Claim = %v, %v; want [%s]", r.cl, r.err, tc.want)
			}
			// The upper bound tells "woken" from "waited out the 3s wait" on
			// a loaded machine; how soon belongs to scenarios/latency.yaml.
			if late := r.at.Sub(due); late < -5*time.Millisecond || late > 1500*time.Millisecond {
				t.Errorf("Claim returned %v after %s became claimable, want 0 to 1.5s (woken, not waited out)", late.Round(time.Millisecond), tc.want)
			}
			if n := w.calls("bzpopmin") - before; n > 5 {
				t.Errorf("the waiting Claim blocked %d times, want a few (no spinning)", n)
			}
		})
	}
}

// One wake reaches as many blocked claimers as there is work: a claim that
// leaves due jobs behind passes the wake on.
func TestBlockingClaimWakeChains(t *testing.T) {
	w := newWaker(t, bucket.Config{}, jobstore.Options{})
	const n = 4
	var wg sync.WaitGroup
	var got atomic.Int64
	lat := make([]time.Duration, n)
	var enqAt time.Time
	for i := range n {
		wg.Go(func() {
			cl, err := w.s.Claim(w.ctx, jobstore.ClaimRequest{WorkerID: "waiter", Max: 1, Lease: time.Hour, Wait: 40 * time.Second})
			if err != nil {
				t.Errorf("Claim: %v", err)
			}
			got.Add(int64(len(cl)))
			lat[i] = time.Since(enqAt)
		})
	}
	time.Sleep(200 * time.Millisecond)
	var batch []jobstore.NewJob
	for i := range n {
		batch = append(batch, jobstore.NewJob{ID: fmt.Sprintf("c%d", i)})
	}
	enqAt = time.Now()
	if err := w.s.Enqueue(w.ctx, batch...); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got.Load() != n {
		t.Fatalf("%d blocked claimers took %d jobs, want %d", n, got.Load(), n)
	}
	// Woken, not timed out: a broken chain leaves a claimer blocked for its
	// whole 40s wait. (How fast the wake is belongs to the scenarios.)
	for i, l := range lat {
		if l > 20*time.Second {
			t.Errorf("claimer %d returned %v after the Enqueue: it waited out its claim instead of being woken", i, l.Round(time.Millisecond))
		}
	}
}

// In wait "poll" no script touches the marker, and the store does not
// declare blocking-claim.
func TestPollTouchesNoMarker(t *testing.T) {
	for _, mover := range []string{bucket.MoverClaim, bucket.MoverBackground} {
		w := newWaker(t, bucket.Config{Width: 50 * time.Millisecond, Mover: mover, Poll: true},
			jobstore.Options{Backoff: jobstore.Backoff{Base: 10 * time.Millisecond}, PollInterval: 10 * time.Millisecond})
		if w.s.Capabilities().Has(jobstore.CapBlockingClaim) {
			t.Errorf("mover %s: poll store declares %s", mover, jobstore.CapBlockingClaim)
		}
		w.enqueue("a", time.Time{})
		w.enqueue("b", time.Now().Add(20*time.Millisecond))
		w.enqueue("c", time.Now().Add(time.Hour))
		if err := w.s.Cancel(w.ctx, "c"); err != nil {
			t.Fatal(err)
		}
		la := w.claimNow("a", 10*time.Millisecond)
		if _, err := w.s.Fail(w.ctx, la, "x"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		if _, err := w.s.Promote(w.ctx, 100); err != nil {
			t.Fatal(err)
		}
		cl, err := w.s.Claim(w.ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 10, Lease: 10 * time.Millisecond, Wait: time.Second})
		if err != nil || len(cl) != 2 {
			t.Fatalf("mover %s: Claim = %v, %v; want a and b", mover, cl, err)
		}
		time.Sleep(20 * time.Millisecond)
		if r, err := w.s.Recover(w.ctx, 10); err != nil || len(r.Requeued) != 2 {
			t.Fatalf("mover %s: Recover = %v, %v", mover, r, err)
		}
		if n := w.calls("bzpopmin"); n != 0 {
			t.Errorf("mover %s: %d BZPOPMIN calls, want none", mover, n)
		}
		if v, err := w.c.Do(w.ctx, rclient.Cmd("KEYS", "*:wake")); err != nil || len(v.([]any)) != 0 {
			t.Errorf("mover %s: KEYS *:wake = %v, %v; want none", mover, v, err)
		}
	}
}
