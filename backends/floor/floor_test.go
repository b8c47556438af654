package floor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/floor"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// One standalone server and one cluster serve the whole test binary.
var (
	srvOnce         sync.Once
	single, cluster *redisserver.Redis
	srvErr          error
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range []*redisserver.Redis{single, cluster} {
		if r != nil {
			_ = r.Close()
		}
	}
	os.Exit(code)
}

type target struct {
	name   string
	client rclient.Client
	single bool
}

// targets returns a client per library and topology: go-redis and rueidis,
// on a standalone Redis and on a 3-master cluster.
func targets(t *testing.T) []target {
	t.Helper()
	srvOnce.Do(func() {
		ctx := context.Background() // the servers outlive this call
		if single, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn}); srvErr != nil {
			return
		}
		cluster, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeCluster})
	})
	if srvErr != nil {
		t.Fatalf("start Redis: %v", srvErr)
	}
	var out []target
	for _, lib := range rclient.Names() {
		for _, r := range []*redisserver.Redis{single, cluster} {
			c, err := rclient.New(lib, r.ClientOptions())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			out = append(out, target{name: lib + "/" + string(r.Mode), client: c, single: r == single})
		}
	}
	return out
}

var queueSeq int

func newStore(t *testing.T, c rclient.Client) *floor.Store {
	t.Helper()
	queueSeq++
	s, err := floor.New(context.Background(), c, jobstore.Options{Queue: fmt.Sprintf("floor-%d-%d", time.Now().UnixNano(), queueSeq)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func jobs(prefix string, n int) []jobstore.NewJob {
	out := make([]jobstore.NewJob, n)
	for i := range out {
		out[i] = jobstore.NewJob{ID: fmt.Sprintf("%s%02d", prefix, i), Payload: []byte("p" + strconv.Itoa(i))}
	}
	return out
}

func claimIDs(t *testing.T, s *floor.Store, max int, wait time.Duration) []string {
	t.Helper()
	cl, err := s.Claim(context.Background(), jobstore.ClaimRequest{WorkerID: "w", Max: max, Lease: time.Minute, Wait: wait})
	if err != nil {
		t.Fatalf("Claim(max %d): %v", max, err)
	}
	ids := make([]string, len(cl))
	for i, c := range cl {
		ids[i] = c.Job.ID
		if c.Lease.JobID != c.Job.ID || c.Lease.Token == "" {
			t.Errorf("claimed %s with lease %+v", c.Job.ID, c.Lease)
		}
		// jobs() gives job <prefix>NN the payload pN: a claim reads it.
		if n, err := strconv.Atoi(c.Job.ID[len(c.Job.ID)-2:]); err == nil && string(c.Job.Payload) != "p"+strconv.Itoa(n) {
			t.Errorf("claimed %s with payload %q, want %q", c.Job.ID, c.Job.Payload, "p"+strconv.Itoa(n))
		}
	}
	return ids
}

// Jobs come out in enqueue order, one at a time or in batches, and every
// completed record holds its result; Stats follows each step.
func TestFIFOClaimComplete(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		for _, tc := range []struct {
			name       string
			n, batch   int
			wait       time.Duration
			completeBy string // "one" or "many"
		}{
			{"single-nowait", 5, 1, 0, "one"},
			{"single-wait", 5, 1, time.Second, "many"},
			{"batch-nowait", 12, 5, 0, "many"},
			{"batch-wait", 12, 5, time.Second, "one"},
		} {
			t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
				s := newStore(t, tg.client)
				in := jobs("j", tc.n)
				if err := s.Enqueue(ctx, in...); err != nil {
					t.Fatal(err)
				}
				if st, err := s.Stats(ctx); err != nil || st.Due != int64(tc.n) {
					t.Fatalf("Stats after enqueue = %+v, %v; want Due %d", st, err, tc.n)
				}
				var got []string
				for len(got) < tc.n {
					ids := claimIDs(t, s, tc.batch, tc.wait)
					if len(ids) == 0 || len(ids) > tc.batch {
						t.Fatalf("claim returned %v (batch %d) after %v", ids, tc.batch, got)
					}
					got = append(got, ids...)
				}
				for i, id := range got {
					if id != in[i].ID {
						t.Fatalf("claim order %v, want enqueue order", got)
					}
				}
				if st, _ := s.Stats(ctx); st.Due != 0 || st.InProgress != int64(tc.n) {
					t.Errorf("Stats after claims = %+v, want all in progress", st)
				}
				complete(t, s, got, tc.completeBy)
				st, _ := s.Stats(ctx)
				if st.InProgress != 0 || st.Completed != int64(tc.n) {
					t.Errorf("Stats after completion = %+v, want none in progress, %d completed", st, tc.n)
				}
				for _, id := range got {
					j, err := s.Get(ctx, id)
					if err != nil || j.Status != jobstore.StatusCompleted || string(j.Result) != "r-"+id || !j.CompletedAt.IsZero() {
						t.Errorf("Get(%s) = %+v, %v; want Completed with result r-%s, no CompletedAt (Limits)", id, j, err, id)
					}
				}
				if ids := claimIDs(t, s, tc.batch, 0); len(ids) != 0 {
					t.Errorf("empty queue gave %v", ids)
				}
			})
		}
	}
}

func complete(t *testing.T, s *floor.Store, ids []string, by string) {
	t.Helper()
	ctx := context.Background()
	var cs []jobstore.Completion
	for _, id := range ids {
		cs = append(cs, jobstore.Completion{Lease: jobstore.Lease{JobID: id, Token: "floor"}, Result: []byte("r-" + id)})
	}
	if by == "one" {
		for _, c := range cs {
			if err := s.Complete(ctx, c.Lease, c.Result); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	errs, err := s.CompleteMany(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("CompleteMany %s: %v", ids[i], e)
		}
	}
}

// A claim that waits is woken by an enqueue, on every client and topology.
func TestBlockingClaimWakes(t *testing.T) {
	for _, tg := range targets(t) {
		for _, batch := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/batch%d", tg.name, batch), func(t *testing.T) {
				s := newStore(t, tg.client)
				got := make(chan []string, 1)
				go func() {
					cl, err := s.Claim(context.Background(), jobstore.ClaimRequest{WorkerID: "w", Max: batch, Lease: time.Minute, Wait: 20 * time.Second})
					if err != nil {
						t.Error(err)
					}
					var ids []string
					for _, c := range cl {
						ids = append(ids, c.Job.ID)
					}
					got <- ids
				}()
				time.Sleep(100 * time.Millisecond) // let the claim block first (not a timed assertion)
				if err := s.Enqueue(context.Background(), jobstore.NewJob{ID: "late"}); err != nil {
					t.Fatal(err)
				}
				if ids := <-got; len(ids) != 1 || ids[0] != "late" {
					t.Fatalf("blocked claim returned %v, want [late]", ids)
				}
			})
		}
	}
}

// What the floor cannot do fails with errors.ErrUnsupported (and bad input
// with ErrInvalid), changing nothing.
func TestUnsupportedAndInvalid(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[0]
	s := newStore(t, tg.client)
	l := jobstore.Lease{JobID: "x", Token: "floor"}
	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"Extend", func() error { _, err := s.Extend(ctx, l, time.Second); return err }, errors.ErrUnsupported},
		{"Fail", func() error { _, err := s.Fail(ctx, l, "boom"); return err }, errors.ErrUnsupported},
		{"Recover", func() error { _, err := s.Recover(ctx, 10); return err }, errors.ErrUnsupported},
		{"delayed", func() error {
			return s.Enqueue(ctx, jobstore.NewJob{ID: "d", RunAt: time.Now().Add(time.Hour)})
		}, errors.ErrUnsupported},
		{"json", func() error {
			_, err := floor.New(ctx, tg.client, jobstore.Options{Encoding: jobstore.EncodingJSON})
			return err
		}, errors.ErrUnsupported},
		{"empty id", func() error { return s.Enqueue(ctx, jobstore.NewJob{}) }, jobstore.ErrInvalid},
		{"negative retries", func() error { return s.Enqueue(ctx, jobstore.NewJob{ID: "n", MaxRetries: -1}) }, jobstore.ErrInvalid},
		{"claim max 0", func() error {
			_, err := s.Claim(ctx, jobstore.ClaimRequest{Lease: time.Second})
			return err
		}, jobstore.ErrInvalid},
		{"complete no token", func() error { return s.Complete(ctx, jobstore.Lease{JobID: "x"}, nil) }, jobstore.ErrInvalid},
		{"get missing", func() error { _, err := s.Get(ctx, "missing"); return err }, jobstore.ErrNotFound},
	} {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if st, err := s.Stats(ctx); err != nil || st != (jobstore.Stats{}) {
		t.Errorf("after refused calls Stats = %+v, %v; want empty", st, err)
	}
	caps := s.Capabilities()
	for _, c := range []jobstore.Capability{jobstore.CapFencing, jobstore.CapLeaseRecovery, jobstore.CapRetries, jobstore.CapDelayedJobs} {
		if caps.Has(c) {
			t.Errorf("floor declares %q", c)
		}
	}
	if !caps.Has(jobstore.CapBlockingClaim) || !caps.Has(jobstore.CapBatchComplete) {
		t.Errorf("floor caps %v lack blocking-claim or batch-complete", caps)
	}
	_ = s.Close()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "c"}); !errors.Is(err, jobstore.ErrClosed) {
		t.Errorf("Enqueue after Close: %v", err)
	}
}

// Cancel takes a waiting job out of the queue; a claimed or unknown one is refused.
func TestCancel(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			s := newStore(t, tg.client)
			if err := s.Enqueue(ctx, jobs("c", 3)...); err != nil {
				t.Fatal(err)
			}
			if ids := claimIDs(t, s, 1, 0); len(ids) != 1 || ids[0] != "c00" {
				t.Fatalf("claimed %v", ids)
			}
			for _, tc := range []struct {
				id   string
				want error
			}{{"c01", nil}, {"c01", jobstore.ErrNotCancelable}, {"c00", jobstore.ErrNotCancelable}, {"zz", jobstore.ErrNotFound}} {
				if err := s.Cancel(ctx, tc.id); !errors.Is(err, tc.want) {
					t.Errorf("Cancel(%s) = %v, want %v", tc.id, err, tc.want)
				}
			}
			if j, _ := s.Get(ctx, "c01"); j.Status != jobstore.StatusCanceled {
				t.Errorf("canceled job has status %v", j.Status)
			}
			if ids := claimIDs(t, s, 5, 0); len(ids) != 1 || ids[0] != "c02" {
				t.Errorf("after cancel claimed %v, want [c02]", ids)
			}
		})
	}
}

// The commands a batch costs are the ones the package doc lists: per job
// one HSET at enqueue, one HGET (the payload) at claim, one LREM and one
// HSET at completion; per batch one LPUSH at enqueue and one LMPOP and one
// LPUSH at claim.
func TestCommandsPerJob(t *testing.T) {
	ctx := context.Background()
	for _, tg := range targets(t) {
		if !tg.single {
			continue
		}
		t.Run(tg.name, func(t *testing.T) {
			s := newStore(t, tg.client)
			if _, err := tg.client.Do(ctx, rclient.Command{Head: []string{"CONFIG", "RESETSTAT"}}); err != nil {
				t.Fatal(err)
			}
			const n = 10
			if err := s.Enqueue(ctx, jobs("k", n)...); err != nil {
				t.Fatal(err)
			}
			ids := claimIDs(t, s, n, 0)
			complete(t, s, ids, "many")
			got := commandCounts(t, tg.client)
			want := map[string]int{"hset": 2 * n, "hget": n, "lpush": 2, "lmpop": 1, "lrem": n}
			for cmd, w := range want {
				if got[cmd] != w {
					t.Errorf("%s called %d times, want %d (all: %v)", cmd, got[cmd], w, got)
				}
			}
			total := 0
			for cmd, c := range got {
				if _, ok := want[cmd]; ok || !connectionCommand(cmd) {
					total += c
				}
			}
			if total != 4*n+3 {
				t.Errorf("%d commands for %d jobs, want %d (all: %v)", total, n, 4*n+3, got)
			}
		})
	}
}

// connectionCommand reports the commands a client or this test sends on its
// own: the handshake, CONFIG RESETSTAT, INFO.
func connectionCommand(cmd string) bool {
	for _, p := range []string{"hello", "config", "info", "ping", "client"} {
		if strings.HasPrefix(cmd, p) {
			return true
		}
	}
	return false
}

// commandCounts parses INFO commandstats: cmdstat_hset:calls=20,...
func commandCounts(t *testing.T, c rclient.Client) map[string]int {
	t.Helper()
	v, err := c.Do(context.Background(), rclient.Command{Head: []string{"INFO", "commandstats"}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(fmt.Sprint(v), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.Atoi(calls)
	}
	return out
}
