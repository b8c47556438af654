package base_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/dual"
	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/backends/stream"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// handoffStores builds each backend that hands due jobs to waiting
// claimers (lib.lua's hand-off).
var handoffStores = []struct {
	name string
	new  func(context.Context, rclient.Client, jobstore.Options) (jobstore.Store, error)
}{
	{"zset", func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		return zset.New(ctx, c, o)
	}},
	{"bucket", func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		return bucket.New(ctx, c, o)
	}},
	{"dual", func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		return dual.New(ctx, c, o)
	}},
	{"stream", func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		return stream.New(ctx, c, o)
	}},
}

// A job handed to a claimer that registered and died (a registration
// nobody reads: a SIGKILLed worker process's) is leased to it under the
// hand-off's provisional lease. Recover returns it once that lease ends,
// due at once and without spending an attempt, since no block popped it,
// and another claimer gets it as its first attempt. A handed job whose
// claimer received it (its block popped the item) is that claimer's: when
// it then dies, Recover takes the job back as any expired lease, spending
// the attempt (as a polling claimer's). An expired registration is swept
// by Recover.
func TestHandoffToDeadWaiter(t *testing.T) { eachHandoffStore(t, "handoff-", handoffToDeadWaiter) }

// eachHandoffStore runs check on every store that hands off, in both
// record encodings, each on a queue of its own (prefix and the subtest's
// name) on a manual clock.
func eachHandoffStore(t *testing.T, prefix string, check func(*testing.T, rclient.Client, jobstore.Store, *clock.Manual, jobstore.Options)) {
	c := basetest.Client(t)
	for _, tc := range handoffStores {
		for _, enc := range []jobstore.Encoding{jobstore.EncodingHash, jobstore.EncodingJSON} {
			t.Run(tc.name+"/"+string(enc), func(t *testing.T) {
				clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
				o := jobstore.Options{Queue: prefix + strings.ReplaceAll(t.Name(), "/", "-"), Clock: clk, PollInterval: time.Millisecond, Encoding: enc}
				check(t, c, openStore(t, c, tc.new, o), clk, o)
			})
		}
	}
}

// handoffToDeadWaiter is TestHandoffToDeadWaiter for one store and record
// encoding: the handed job's record is written once, already leased.
func handoffToDeadWaiter(t *testing.T, c rclient.Client, s jobstore.Store, clk *clock.Manual, o jobstore.Options) {
	ctx := context.Background()
	keys := keys.New(o.Queue)
	ghost := func(name string) {
		// A registration as a claimer's call makes it (base's waiter):
		// token base, max, provisional lease ms, worker; its wait ends in
		// a second.
		until := base.Ms(clk.Now().Add(time.Second))
		if _, err := c.Do(ctx, rclient.Cmd("ZADD", keys.Waiters(), until, name+"-1|5|1000|"+name)); err != nil {
			t.Fatal(err)
		}
	}
	count := func(cmd, key string) int64 { n, _ := c.Do(ctx, rclient.Cmd(cmd, key)); return base.Int(n) }

	ghost("ghost")
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "j1", Payload: []byte("p"), MaxRetries: 0}); err != nil {
		t.Fatal(err)
	}
	j, err := s.Get(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != jobstore.StatusInProgress || j.WorkerID != "ghost" || j.LeaseToken != "ghost-1.1" ||
		!j.LeaseDeadline.Equal(clk.Now().Add(time.Second)) || !j.StartedAt.Equal(clk.Now()) {
		t.Fatalf("after the enqueue: %s worker %q token %q deadline %v started %v, want InProgress, handed to ghost (ghost-1.1) from now until now+1s",
			j.Status, j.WorkerID, j.LeaseToken, j.LeaseDeadline, j.StartedAt)
	}
	if n := count("ZCARD", keys.Waiters()); n != 0 {
		t.Errorf("the waiter given a job is still registered (%d waiters)", n)
	}
	// The item, and its copy for a leave after an orphaned block.
	if n := count("ZCARD", keys.Inbox("ghost-1")); n != 2 {
		t.Errorf("the ghost's inbox holds %d items, want 2", n)
	}
	clk.Advance(1001 * time.Millisecond)
	r, err := s.Recover(ctx, 10)
	if err != nil || !slices.Equal(r.Returned, []string{"j1"}) || r.Len() != 1 {
		t.Fatalf("Recover after the provisional lease = %+v, %v; want j1 returned (not requeued, not dead: max_retries 0)", r, err)
	}
	if j, err := s.Get(ctx, "j1"); err != nil || j.Status != jobstore.StatusQueued || j.RetryCount != 0 {
		t.Fatalf("j1 after its return: %s retries %d, %v; want Queued with RetryCount 0", j.Status, j.RetryCount, err)
	}
	claim := func(id string, attempt int) jobstore.Claimed {
		t.Helper()
		if m, ok := s.(jobstore.Mover); ok {
			_, _ = m.Promote(ctx, 10)
		}
		got, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 5, Lease: time.Minute})
		if err != nil || len(got) != 1 || got[0].Job.ID != id || got[0].Lease.Attempt != attempt {
			t.Fatalf("Claim = %v, %v; want %s, attempt %d", got, err, id, attempt)
		}
		return got[0]
	}
	if g := claim("j1", 0); string(g.Job.Payload) != "p" {
		t.Fatalf("j1 claimed again with payload %q", g.Job.Payload)
	}

	// Two jobs handed in one item, their leases taken back by two Recover
	// calls: both are returned, and a claimer that comes back late to the
	// inbox gets nothing.
	ghost("pair")
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "p1"}, jobstore.NewJob{ID: "p2"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(1001 * time.Millisecond)
	var returned []string
	for range 2 {
		r, err := s.Recover(ctx, 1)
		if err != nil || r.Len() != 1 {
			t.Fatalf("Recover(1) = %+v, %v; want one job", r, err)
		}
		returned = append(returned, r.Returned...)
	}
	if slices.Sort(returned); !slices.Equal(returned, []string{"p1", "p2"}) {
		t.Fatalf("returned %v over two Recover calls, want p1 and p2", returned)
	}
	if v, _ := c.Do(ctx, rclient.Cmd("ZPOPMIN", keys.Inbox("pair-1"))); len(base.Strings(v)) > 0 && base.Strings(v)[0] != "returned" {
		t.Fatalf("a late claimer's pop of the inbox got %v, want only the returned mark", v)
	}
	if got, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 5, Lease: time.Minute}); err != nil || len(got) != 2 ||
		got[0].Lease.Attempt != 0 || got[1].Lease.Attempt != 0 {
		t.Fatalf("Claim after the pair's return = %v, %v; want p1 and p2, first attempts", got, err)
	}

	// Received (its block popped the item), then dead: the attempt is
	// spent.
	ghost("receiver")
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "j2", MaxRetries: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, rclient.Cmd("ZPOPMIN", keys.Inbox("receiver-1"))); err != nil {
		t.Fatal(err)
	}
	clk.Advance(1001 * time.Millisecond)
	if r, err := s.Recover(ctx, 10); err != nil || !slices.Equal(r.Requeued, []string{"j2"}) || r.Len() != 1 {
		t.Fatalf("Recover after the received job's provisional lease = %+v, %v; want j2 requeued", r, err)
	}
	claim("j2", 1)

	// A registration whose wait ended is swept by Recover.
	ghost("late")
	clk.Advance(2 * time.Second)
	if _, err := s.Recover(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if n := count("ZCARD", keys.Waiters()); n != 0 {
		t.Errorf("%d expired registration(s) left after Recover", n)
	}
}

// A waiter's registration ends with its wait, also when its context ends
// first: a job enqueued afterwards is not handed to it but stays due.
func TestHandoffWaitEnds(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	for _, tc := range handoffStores {
		t.Run(tc.name, func(t *testing.T) {
			o := jobstore.Options{Queue: "handoff-end-" + tc.name, PollInterval: time.Millisecond}
			s := openStore(t, c, tc.new, o)
			keys := keys.New(o.Queue)
			for _, end := range []string{"wait", "context"} {
				// A context deadline shorter than the wait ends it (a go-redis
				// read blocked in Redis does not see a mere cancel).
				wctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
				wait := time.Minute
				if end == "wait" {
					wctx, wait = ctx, 300*time.Millisecond
				}
				done := make(chan error, 1)
				go func() {
					got, err := s.Claim(wctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute, Wait: wait})
					if len(got) > 0 {
						t.Errorf("%s: the waiting claim returned %d jobs from an empty queue", end, len(got))
					}
					done <- err
				}()
				waitFor(t, func() bool { n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Waiters())); return base.Int(n) == 1 })
				if err := <-done; err != nil {
					t.Fatalf("%s: Claim: %v", end, err)
				}
				cancel()
				if n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Waiters())); base.Int(n) != 0 {
					t.Fatalf("%s: %d waiters left registered after the claim returned", end, base.Int(n))
				}
			}
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: "j1"}); err != nil {
				t.Fatal(err)
			}
			if st, err := s.Stats(ctx); err != nil || st.Due != 1 || st.InProgress != 0 {
				t.Fatalf("Stats after the waits ended = %+v, %v; want the job due, none in progress", st, err)
			}
		})
	}
}

// waitFor polls cond until it holds, for up to 10s (readiness, not a
// fixed sleep).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not reached within 10s")
		}
	}
}

// A claim right after one that drained the queue registers before it looks
// (BlockClaim's plain ZADD, the streams' stream_join). A job enqueued in
// between, while no one waited, set no marker for the streams: the
// registration must see it and the claim take it, not block past it.
func TestHandoffJoinFirstSeesJobBetween(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	for _, tc := range handoffStores {
		t.Run(tc.name, func(t *testing.T) {
			o := jobstore.Options{Queue: "handoff-join-" + tc.name, PollInterval: time.Millisecond}
			s := openStore(t, c, tc.new, o)
			req := jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute}
			for i, id := range []string{"j1", "j2", "j3"} {
				if err := s.Enqueue(ctx, jobstore.NewJob{ID: id, Payload: []byte(id)}); err != nil {
					t.Fatal(err)
				}
				// The first claim drains the queue; the next ones wait, so
				// they join first.
				req.Wait = time.Duration(min(i, 1)) * 2 * time.Second
				got, err := s.Claim(ctx, req)
				if err != nil || len(got) != 1 || got[0].Job.ID != id {
					t.Fatalf("claim %d = %v, %v; want %s", i+1, got, err, id)
				}
			}
			keys := keys.New(o.Queue)
			if n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Waiters())); base.Int(n) != 0 {
				t.Fatalf("%d waiters left registered", base.Int(n))
			}
			// Now one blocks registered (it joined first), and is handed
			// the next job.
			done := make(chan []jobstore.Claimed, 1)
			go func() {
				req.Wait = 10 * time.Second
				got, err := s.Claim(ctx, req)
				if err != nil {
					t.Error(err)
				}
				done <- got
			}()
			waitFor(t, func() bool { n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Waiters())); return base.Int(n) == 1 })
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: "j4", Payload: []byte("j4")}); err != nil {
				t.Fatal(err)
			}
			if got := <-done; len(got) != 1 || got[0].Job.ID != "j4" || string(got[0].Job.Payload) != "j4" {
				t.Fatalf("the registered claimer got %v; want j4 with its payload", got)
			}
		})
	}
}

// openStore builds a store on c for a test, closed when the test ends.
func openStore(t *testing.T, c rclient.Client, newStore func(context.Context, rclient.Client, jobstore.Options) (jobstore.Store, error),
	o jobstore.Options) jobstore.Store {
	t.Helper()
	s, err := newStore(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The streams set the wake-up marker on an append only while a live
// waiter is registered: a registration whose wait has ended (a claimer
// that died registered, not yet swept) wakes nobody, and with a live one
// the marker is set.
func TestStreamWakeNeedsLiveWaiter(t *testing.T) {
	ctx := context.Background()
	someHandoffStores(t, "wake-", []string{"stream", "dual"},
		func(t *testing.T, c rclient.Client, s jobstore.Store, clk *clock.Manual, o jobstore.Options) {
			keys := keys.New(o.Queue)
			for i, live := range []bool{false, true} {
				until := clk.Now().Add(-time.Millisecond) // ended
				if live {
					until = clk.Now().Add(time.Second)
				}
				_, _ = c.Do(ctx, rclient.Cmd("DEL", keys.Wake()))
				if _, err := c.Do(ctx, rclient.Cmd("ZADD", keys.Waiters(), base.Ms(until), "w-"+strconv.Itoa(i)+"|1|1000|w")); err != nil {
					t.Fatal(err)
				}
				// A job enqueued while one waits unread is appended, not
				// handed (stream_busy), and wakes a live waiter.
				for _, id := range []string{"a" + strconv.Itoa(i), "b" + strconv.Itoa(i)} {
					if err := s.Enqueue(ctx, jobstore.NewJob{ID: id}); err != nil {
						t.Fatal(err)
					}
				}
				n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Wake()))
				if got := base.Int(n) == 1; got != live {
					t.Errorf("live waiter %v: marker set %v", live, got)
				}
			}
		})
}

// someHandoffStores runs check on the hand-off stores named, hash records,
// each on a queue of its own (prefix and the store's name) on a manual
// clock.
func someHandoffStores(t *testing.T, prefix string, names []string, check func(*testing.T, rclient.Client, jobstore.Store, *clock.Manual, jobstore.Options)) {
	c := basetest.Client(t)
	for _, tc := range handoffStores {
		if !slices.Contains(names, tc.name) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
			o := jobstore.Options{Queue: prefix + tc.name, Clock: clk, PollInterval: time.Millisecond}
			check(t, c, openStore(t, c, tc.new, o), clk, o)
		})
	}
}

// A claimer's registration lasts at most about a second whatever its
// wait, and a live claimer renews it: a process killed while registered
// stops being handed jobs that soon.
func TestHandoffRegistrationIsShort(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	for _, tc := range handoffStores {
		t.Run(tc.name, func(t *testing.T) {
			o := jobstore.Options{Queue: "handoff-short-" + tc.name, PollInterval: time.Millisecond}
			s := openStore(t, c, tc.new, o)
			keys := keys.New(o.Queue)
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = s.Claim(wctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute, Wait: 30 * time.Second})
			}()
			defer func() { cancel(); <-done }()
			until := func() (string, time.Time) {
				v, _ := c.Do(ctx, rclient.Cmd("ZRANGE", keys.Waiters(), "0", "0"))
				r := base.Strings(v)
				if len(r) < 1 {
					return "", time.Time{}
				}
				sc, _ := c.Do(ctx, rclient.Cmd("ZSCORE", keys.Waiters(), r[0]))
				f, _ := strconv.ParseFloat(fmt.Sprint(sc), 64)
				return r[0], time.UnixMilli(int64(f))
			}
			var first string
			waitFor(t, func() bool { m, _ := until(); first = m; return m != "" })
			_, at := until()
			if d := time.Until(at); d > 1200*time.Millisecond {
				t.Fatalf("a claimer waiting 30s registered until %v from now, want about a second at most", d)
			}
			// Renewed: a new registration replaces it before it ends.
			waitFor(t, func() bool { m, _ := until(); return m != "" && m != first })
		})
	}
}

// A leave is idempotent: a claim call that ended a registration and took
// the item an enqueue handed it may lose its reply (its client gave up at
// its deadline), and the leave base sends after it must get the same jobs
// again. The first leave takes the item and keeps its short copy, from
// which the second makes the item again, byte for byte (payloads with the
// separators in them, a named job, two jobs in one item); so does a leave
// after an orphaned block popped the item. A job so taken counts as
// received: once its provisional lease ends, Recover takes it back
// spending its attempt, not returned as never delivered.
func TestHandoffLeaveTwice(t *testing.T) { eachHandoffStore(t, "leave2-", handoffLeaveTwice) }

func handoffLeaveTwice(t *testing.T, c rclient.Client, s jobstore.Store, clk *clock.Manual, o jobstore.Options) {
	ctx := context.Background()
	run, ok := s.(interface {
		Run(context.Context, base.Script, []string, []string) (any, error)
	})
	if !ok {
		t.Fatalf("%T runs no scripts", s)
	}
	keys := keys.New(o.Queue)
	leave := func(member string) string {
		t.Helper()
		v, err := run.Run(ctx, base.ScriptLeave, []string{keys.Waiters()}, []string{member, base.Ms(clk.Now())})
		if err != nil {
			t.Fatal(err)
		}
		item, _ := v.(string)
		return item
	}
	handTo := func(name string, jobs ...jobstore.NewJob) string {
		t.Helper()
		member := name + "-1|5|1000|" + name
		until := base.Ms(clk.Now().Add(time.Second))
		if _, err := c.Do(ctx, rclient.Cmd("ZADD", keys.Waiters(), until, member)); err != nil {
			t.Fatal(err)
		}
		if err := s.Enqueue(ctx, jobs...); err != nil {
			t.Fatal(err)
		}
		return member
	}
	for _, tc := range []struct {
		name string
		jobs []jobstore.NewJob
	}{
		{"one", []jobstore.NewJob{{ID: "a1", Payload: []byte("p|q:1-~"), Name: "nm|x", MaxRetries: 2}}},
		{"two", []jobstore.NewJob{{ID: "b1", Payload: []byte("x")}, {ID: "b2"}}},
	} {
		member := handTo(tc.name, tc.jobs...)
		first := leave(member)
		if first == "" {
			t.Fatalf("%s: the first leave got nothing", tc.name)
		}
		if again := leave(member); again != first {
			t.Fatalf("%s: the second leave got %q, want the first's %q", tc.name, again, first)
		}
	}
	// An orphaned block popped the item; the leave makes it from the copy.
	member := handTo("orphan", jobstore.NewJob{ID: "c1", Payload: []byte("z"), Name: "n"})
	v, err := c.Do(ctx, rclient.Cmd("ZPOPMIN", keys.Inbox("orphan-1")))
	if err != nil || len(base.Strings(v)) != 2 {
		t.Fatalf("ZPOPMIN of the inbox = %v, %v", v, err)
	}
	if got := leave(member); got != base.Strings(v)[0] {
		t.Fatalf("the leave after the orphaned pop got %q, want the popped %q", got, base.Strings(v)[0])
	}
	// Taken by a leave, then its claimer died: received, so the attempt
	// is spent (a1 retried, the others out of retries).
	clk.Advance(1001 * time.Millisecond)
	r, err := s.Recover(ctx, 10)
	if err != nil || len(r.Returned) != 0 || !slices.Equal(r.Requeued, []string{"a1"}) || r.Len() != 4 {
		t.Fatalf("Recover after the provisional leases = %+v, %v; want a1 requeued, b1, b2 and c1 dead (received, no retries left), none returned", r, err)
	}
}

// A claim that leaves due jobs behind passes the wake on (it sets the
// marker), so that one wake chains to as many blocked claimers as there is
// work; a claim that takes the last due job does not. zset learns it from
// the extra member its pop reads, bucket from a head read.
func TestClaimPassesWakeOn(t *testing.T) {
	ctx := context.Background()
	someHandoffStores(t, "pass-", []string{"zset", "bucket"},
		func(t *testing.T, c rclient.Client, s jobstore.Store, _ *clock.Manual, o jobstore.Options) {
			keys := keys.New(o.Queue)
			if err := s.Enqueue(ctx, jobstore.NewJob{ID: "a"}, jobstore.NewJob{ID: "b"}); err != nil {
				t.Fatal(err)
			}
			for _, want := range []bool{true, false} {
				_, _ = c.Do(ctx, rclient.Cmd("DEL", keys.Wake()))
				if got, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute}); err != nil || len(got) != 1 {
					t.Fatalf("Claim = %v, %v; want one job", got, err)
				}
				n, _ := c.Do(ctx, rclient.Cmd("ZCARD", keys.Wake()))
				if set := base.Int(n) == 1; set != want {
					t.Errorf("due jobs left %v: marker set %v", want, set)
				}
			}
		})
}
