package asynq_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/asynq"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// fast shortens asynq's polls so the suite's waits are not spent asleep.
func fast() asynq.Config {
	cfg := asynq.DefaultConfig()
	cfg.TaskCheckInterval = 10 * time.Millisecond
	cfg.DelayedTaskCheckInterval = 100 * time.Millisecond
	cfg.ShutdownTimeout = 100 * time.Millisecond
	cfg.Concurrency = 16
	return cfg
}

// TestConformance runs the shared suite on asynq: every case it does not
// pass is either a capability it does not declare (skipped, naming it) or a
// finding about asynq (skipped with the finding's text, asynq.Findings).
// AEBENCH_ASYNQ_CONFORMANCE=1 adds the cluster and the rueidis client.
func TestConformance(t *testing.T) {
	newStore := func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		s, err := asynq.NewWith(ctx, c, o, fast())
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	b := conformance.Backend{Name: "asynq", New: newStore, Findings: asynq.Findings()}
	if os.Getenv("AEBENCH_ASYNQ_CONFORMANCE") != "" {
		conformance.Run(t, []conformance.Backend{b}, basetest.Targets(t), rclient.Names())
		return
	}
	conformance.RunStore(t, b.Name, b.New, conformance.Config{Findings: b.Findings})
}

func newStore(t *testing.T, cfg asynq.Config) *asynq.Store {
	t.Helper()
	s, err := asynq.NewWith(context.Background(), basetest.Client(t), jobstore.Options{Queue: "t"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A job goes through asynq and back: enqueue, claim, complete; Get and
// Stats report it as asynq recorded it; a duplicate id is refused.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, fast())
	nj := jobstore.NewJob{ID: "a1", Name: "mail", Payload: []byte("hi"), MaxRetries: 2,
		Headers: map[string][]string{"X": {"1", "2"}}, RouteParams: map[string]string{"r": "v"}}
	if err := s.Enqueue(ctx, nj); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "a1"}); !errors.Is(err, jobstore.ErrDuplicateID) {
		t.Fatalf("duplicate: %v", err)
	}
	cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 4, Lease: time.Minute, Wait: 10 * time.Second})
	if err != nil || len(cl) != 1 {
		t.Fatalf("Claim = %v, %v; want one job", cl, err)
	}
	j := cl[0].Job
	if j.ID != "a1" || j.Name != "mail" || string(j.Payload) != "hi" || j.MaxRetries != 2 || j.Headers["X"][1] != "2" || j.RouteParams["r"] != "v" {
		t.Errorf("claimed %+v, want the job as enqueued", j)
	}
	if _, err := s.Extend(ctx, cl[0].Lease, time.Minute); err != nil {
		t.Errorf("Extend: %v", err)
	}
	if err := s.Complete(ctx, cl[0].Lease, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, cl[0].Lease, []byte("again")); !errors.Is(err, jobstore.ErrLeaseLost) {
		t.Errorf("second Complete: %v, want ErrLeaseLost", err)
	}
	got := waitStatus(t, s, "a1", jobstore.StatusCompleted)
	if string(got.Result) != "ok" {
		t.Errorf("Result %q, want ok", got.Result)
	}
	if st, err := s.Stats(ctx); err != nil || st.Completed != 1 || st.InProgress != 0 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
}

// Fail retries with the store's backoff until retries are spent, then asynq archives the job.
func TestFailRetriesThenArchives(t *testing.T) {
	ctx := context.Background()
	s, err := asynq.NewWith(ctx, basetest.Client(t), jobstore.Options{Queue: "t",
		Backoff: jobstore.Backoff{Base: time.Millisecond, Max: time.Millisecond}}, fast())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "f", MaxRetries: 1}); err != nil {
		t.Fatal(err)
	}
	for attempt, want := range []jobstore.Status{jobstore.StatusScheduled, jobstore.StatusFailed} {
		// A retry waits for asynq's whole-second retry time and its forwarder.
		cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute, Wait: 20 * time.Second})
		if err != nil || len(cl) != 1 || cl[0].Lease.Attempt != attempt {
			t.Fatalf("attempt %d: Claim = %+v, %v", attempt, cl, err)
		}
		fr, err := s.Fail(ctx, cl[0].Lease, "boom")
		if err != nil || fr.Status != want {
			t.Fatalf("attempt %d: Fail = %+v, %v; want %v", attempt, fr, err, want)
		}
	}
	if j := waitStatus(t, s, "f", jobstore.StatusFailed); !strings.Contains(j.Error, "boom") || j.RetryCount != 1 {
		t.Errorf("dead job %+v, want error boom after 1 retry", j)
	}
}

// Cancel deletes a waiting job and refuses a claimed one; bad settings are refused.
func TestCancelAndConfig(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, fast())
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "later", RunAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want error
	}{{"later", nil}, {"later", jobstore.ErrNotFound}, {"nope", jobstore.ErrNotFound}} {
		if err := s.Cancel(ctx, tc.id); !errors.Is(err, tc.want) {
			t.Errorf("Cancel(%s) = %v, want %v", tc.id, err, tc.want)
		}
	}
	for _, tc := range []struct {
		extra map[string]string
		want  string
	}{
		{map[string]string{asynq.OptionTaskCheck: "0s"}, asynq.OptionTaskCheck},
		{map[string]string{asynq.OptionDelayedCheck: "soon"}, asynq.OptionDelayedCheck},
		{map[string]string{asynq.OptionConcurrency: "0"}, asynq.OptionConcurrency},
	} {
		if _, err := asynq.ParseConfig(tc.extra); !errors.Is(err, jobstore.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%v) = %v, want ErrInvalid naming %s", tc.extra, err, tc.want)
		}
	}
	if cfg, err := asynq.ParseConfig(map[string]string{asynq.OptionTaskCheck: "50ms"}); err != nil || cfg.TaskCheckInterval != 50*time.Millisecond {
		t.Errorf("ParseConfig(50ms) = %+v, %v", cfg, err)
	}
}

// waitStatus polls Get: asynq writes an outcome after the handler returns.
func waitStatus(t *testing.T, s *asynq.Store, id string, want jobstore.Status) jobstore.Job {
	t.Helper()
	var j jobstore.Job
	var err error
	for range 200 {
		if j, err = s.Get(context.Background(), id); err == nil && j.Status == want {
			return j
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %s: last Get = %+v, %v; want status %v", id, j, err, want)
	return j
}

// A batch goes through asynq's Client concurrently: every job stored; a
// batch holding a stored id fails with ErrDuplicateID and stores the rest
// (not atomic, as Limits says); an id twice in a batch stores nothing.
func TestBulkEnqueue(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, fast())
	batch := func(prefix string, n int) []jobstore.NewJob {
		out := make([]jobstore.NewJob, n)
		for i := range out {
			out[i] = jobstore.NewJob{ID: fmt.Sprintf("%s%d", prefix, i), Payload: []byte("p")}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		jobs   []jobstore.NewJob
		err    error
		stored []string
		absent []string
	}{
		{"fifty", batch("b", 50), nil, []string{"b0", "b25", "b49"}, nil},
		{"one stored id", append(batch("c", 9), jobstore.NewJob{ID: "b3"}), jobstore.ErrDuplicateID, []string{"c0", "c8"}, nil},
		{"an id twice", append(batch("d", 3), jobstore.NewJob{ID: "d1"}), jobstore.ErrDuplicateID, nil, []string{"d0", "d2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Enqueue(ctx, tc.jobs...)
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("Enqueue: %v, want %v", err, tc.err)
			}
			for _, id := range tc.stored {
				if _, err := s.Get(ctx, id); err != nil {
					t.Errorf("Get(%s): %v, want stored", id, err)
				}
			}
			for _, id := range tc.absent {
				if _, err := s.Get(ctx, id); !errors.Is(err, jobstore.ErrNotFound) {
					t.Errorf("Get(%s): %v, want ErrNotFound", id, err)
				}
			}
		})
	}
}

// Serve runs the handler in asynq's own: a completed job keeps its result,
// a failed one without retries left is archived, a second End is refused,
// and the Store, serving, refuses Claim and a second Serve.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t, fast())
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "ok", Payload: []byte("p")}, jobstore.NewJob{ID: "bad"}); err != nil {
		t.Fatal(err)
	}
	type end struct {
		id, payload    string
		fail           jobstore.FailResult
		again, failErr error
	}
	ends := make(chan end, 2)
	served := make(chan error, 1)
	go func() {
		served <- s.Serve(ctx, func(_ context.Context, c jobstore.Claimed, e jobstore.Ender) {
			got := end{id: c.Lease.JobID, payload: string(c.Job.Payload)}
			if got.id == "bad" {
				got.fail, got.failErr = e.Fail("boom")
			} else {
				got.failErr = e.Complete([]byte("done"))
			}
			got.again = e.Complete(nil)
			ends <- got
		})
	}()
	for range 2 {
		select {
		case g := <-ends:
			if g.failErr != nil || !errors.Is(g.again, jobstore.ErrLeaseLost) {
				t.Errorf("%s: end %v, second end %v (want nil, ErrLeaseLost)", g.id, g.failErr, g.again)
			}
			if g.id == "ok" && g.payload != "p" || g.id == "bad" && g.fail.Status != jobstore.StatusFailed {
				t.Errorf("%s: payload %q, fail %+v", g.id, g.payload, g.fail)
			}
		case err := <-served:
			t.Fatalf("Serve returned %v before the jobs ran", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no job served within 20s")
		}
	}
	if j := waitStatus(t, s, "ok", jobstore.StatusCompleted); string(j.Result) != "done" {
		t.Errorf("ok: Result %q, want done", j.Result)
	}
	if j := waitStatus(t, s, "bad", jobstore.StatusFailed); !strings.Contains(j.Error, "boom") {
		t.Errorf("bad: %+v, want error boom", j)
	}
	if _, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Minute}); !errors.Is(err, jobstore.ErrInvalid) {
		t.Errorf("Claim while serving: %v, want ErrInvalid", err)
	}
	if err := s.Serve(ctx, func(context.Context, jobstore.Claimed, jobstore.Ender) {}); !errors.Is(err, jobstore.ErrInvalid) {
		t.Errorf("second Serve: %v, want ErrInvalid", err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
