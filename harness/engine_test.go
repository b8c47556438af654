package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/redisserver"
)

// shortRun is a mixed load small enough for tests: immediate and delayed
// jobs, failures with quick retries.
func shortRun(t *testing.T, overrides ...Override) RunSpec {
	t.Helper()
	src := `
duration: 1s
warmup: 300ms
drain: 10s
calibration: off
backends: [null]
store: {backoff_base: 20ms, backoff_max: 100ms, poll_interval: 20ms}
producers: {rate: 400, delayed: 0.3, delay: "uniform(50ms, 200ms)", max_retries: 2}
workers: {count: 2, concurrency: 4, claim_batch: 2, handler: "exponential(500us)", fail: 0.1, recovery_interval: 100ms}
`
	s, err := ParseScenario("test.yaml", []byte(src), overrides...)
	if err != nil {
		t.Fatal(err)
	}
	return s.Runs()[0]
}

func newNull(t *testing.T, cfg Config) *NullStore {
	t.Helper()
	s, err := NewNullStore(jobstore.Options{Backoff: jobstore.Backoff{Base: cfg.Store.BackoffBase, Max: cfg.Store.BackoffMax}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEngineNull(t *testing.T) {
	spec := shortRun(t)
	var lines atomic.Int64
	res := runEngine(context.Background(), spec, newNull(t, spec.Config), engineHooks{label: "null",
		status: func(StatusLine) { lines.Add(1) }})
	if res.err != nil {
		t.Fatal(res.err)
	}
	l := res.ledger
	if !l.OK || l.Lost != 0 || l.Acknowledged == 0 || l.Completed+l.DeadLettered != l.Acknowledged {
		t.Fatalf("ledger %+v", l)
	}
	if !res.window.Drained {
		t.Error("not drained")
	}
	// About 400 jobs/s over 1.3s; allow for a slow machine.
	if l.Acknowledged < 300 || l.Acknowledged > 700 {
		t.Errorf("acknowledged %d jobs, want about 520", l.Acknowledged)
	}
	if c := res.counters; c.Retried == 0 || c.Completed != l.Completed || c.Started != l.Executions {
		t.Errorf("counters %+v vs ledger %+v", c, l)
	}
	for _, tag := range []Tag{TagE2E, TagLateness, TagQueueWait, TagEnqueue, TagClaim, TagComplete, TagFail, TagDispatch, TagScheduleLag} {
		if h := res.hists[tag]; h == nil || h.TotalCount() == 0 {
			t.Errorf("histogram %s is empty", tag)
		}
	}
	// Warm-up jobs are checked but not measured: fewer e2e values than
	// immediate first-attempt completions.
	if n := res.hists[TagE2E].TotalCount(); n >= l.Completed {
		t.Errorf("e2e recorded %d values for %d completions: warm-up not excluded", n, l.Completed)
	}
	if res.throughput.Completed < 250 || res.throughput.Completed > 600 {
		t.Errorf("throughput %.0f jobs/s, want about 400", res.throughput.Completed)
	}
	if lines.Load() < 1 || len(res.series) < 2 {
		t.Errorf("status lines %d, series points %d", lines.Load(), len(res.series))
	}
}

// lossyStore acknowledges every 25th job without storing it.
type lossyStore struct {
	*NullStore
	n atomic.Int64
}

func (s *lossyStore) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	var keep []jobstore.NewJob
	for _, j := range jobs {
		if s.n.Add(1)%25 != 0 {
			keep = append(keep, j)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return s.NullStore.Enqueue(ctx, keep...)
}

// eagerStore ignores RunAt: delayed jobs run at once.
type eagerStore struct{ *NullStore }

func (s eagerStore) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	for i := range jobs {
		jobs[i].RunAt = time.Time{}
	}
	return s.NullStore.Enqueue(ctx, jobs...)
}

func TestEngineCatchesBrokenStores(t *testing.T) {
	spec := shortRun(t, Override{"drain", "500ms"})
	res := runEngine(context.Background(), spec, &lossyStore{NullStore: newNull(t, spec.Config)}, engineHooks{label: "lossy"})
	if res.ledger.OK || res.ledger.Lost == 0 || res.window.Drained {
		t.Errorf("lossy store: ledger %+v drained %v", res.ledger, res.window.Drained)
	}
	if want := res.ledger.Acknowledged / 25; res.ledger.Lost < want-1 || res.ledger.Lost > want+1 {
		t.Errorf("lost %d, want about %d", res.ledger.Lost, want)
	}
	res = runEngine(context.Background(), spec, eagerStore{newNull(t, spec.Config)}, engineHooks{label: "eager"})
	if res.ledger.OK || res.ledger.StartedEarly == 0 || res.ledger.MaxEarlyNs < int64(40*time.Millisecond) {
		t.Errorf("eager store: ledger %+v", res.ledger)
	}
}

func TestEngineClosedLoopAndHeartbeat(t *testing.T) {
	spec := shortRun(t)
	spec.Config.Producers.Mode = "closed"
	spec.Config.Producers.MaxBacklog = 50
	spec.Config.Workers.Heartbeat = true
	spec.Config.Workers.Lease = 30 * time.Millisecond
	spec.Config.Workers.HeartbeatInterval = 10 * time.Millisecond
	spec.Config.Workers.Handler = Dist{Kind: "uniform", A: 5 * time.Millisecond, B: 25 * time.Millisecond}
	res := runEngine(context.Background(), spec, newNull(t, spec.Config), engineHooks{label: "closed"})
	if !res.ledger.OK || res.ledger.Lost != 0 {
		t.Fatalf("ledger %+v", res.ledger)
	}
	if res.counters.Extends == 0 {
		t.Error("no heartbeats")
	}
	// Heartbeats keep 25ms handlers on a 30ms lease: nothing recovered.
	if res.ledger.Recovered != 0 {
		t.Errorf("recovered %d jobs despite heartbeats", res.ledger.Recovered)
	}
	if res.peakBacklog > 50+int64(spec.Config.Producers.Count) {
		t.Errorf("closed loop backlog peaked at %d, bound 50", res.peakBacklog)
	}
}

func TestEngineLeaseExpiryIsRecovered(t *testing.T) {
	spec := shortRun(t)
	spec.Config.Workers.Lease = 20 * time.Millisecond
	spec.Config.Workers.Fail = 0
	spec.Config.Workers.Handler = Dist{Kind: "constant", A: 40 * time.Millisecond}
	spec.Config.Producers.Rate = 100
	spec.Config.Producers.MaxRetries = 1
	spec.Config.Workers.RecoveryInterval = 10 * time.Millisecond
	res := runEngine(context.Background(), spec, newNull(t, spec.Config), engineHooks{label: "lease"})
	l := res.ledger
	// Every job outlives its lease: recovered, re-run, then dead-lettered.
	if !l.OK || l.Recovered == 0 || l.Fenced == 0 || l.DeadLettered == 0 {
		t.Fatalf("ledger %+v", l)
	}
}

// TestRunEveryBackend is the short end-to-end run of each registered
// backend on a spawned Redis, with plots and every output file.
func TestRunEveryBackend(t *testing.T) {
	var names []string
	for _, b := range Backends() {
		if !b.Calibration {
			names = append(names, b.Name)
		}
	}
	src := fmt.Sprintf(`
name: e2e-test
duration: 1500ms
warmup: 500ms
drain: 15s
calibration: 1s
backends: [%s]
store: {backoff_base: 20ms, backoff_max: 200ms, poll_interval: 20ms}
producers: {rate: 300, delayed: 0.2, delay: "uniform(50ms, 300ms)", max_retries: 2}
workers: {count: 2, concurrency: 4, claim_batch: 2, claim_wait: 200ms, handler: "exponential(500us)", fail: 0.05, recovery_interval: 200ms}
`, strings.Join(names, ", "))
	s, err := ParseScenario("e2e.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Stdout: &out, GitDir: ".."})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis: %v", err)
	}
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	if len(outcome.Failed)+len(outcome.Errored) > 0 || outcome.Interrupted {
		t.Fatalf("failed %v errored %v", outcome.Failed, outcome.Errored)
	}
	data, err := os.ReadFile(filepath.Join(outcome.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.SchemaVersion != 1 || !sum.Complete || len(sum.Runs) != len(names)+1 || len(sum.Environment.Redis) != 1 ||
		sum.Environment.Redis[0].Version == "" {
		t.Fatalf("summary: version %d complete %v runs %d env %+v", sum.SchemaVersion, sum.Complete, len(sum.Runs), sum.Environment)
	}
	if sum.HarnessOverhead == nil || len(sum.HarnessOverhead.Calibration) != 1 {
		t.Errorf("harness overhead %+v", sum.HarnessOverhead)
	}
	for _, r := range sum.Runs {
		l := r.Ledger
		if r.Status != StatusOK || l.Lost != 0 || l.Unexpected != 0 || l.StartedEarly != 0 || l.Acknowledged == 0 ||
			l.Completed+l.DeadLettered != l.Acknowledged {
			t.Errorf("%s: status %s ledger %+v", r.ID, r.Status, l)
		}
		if r.LatencyNs["e2e"]["count"] == 0 || r.Throughput.Completed == 0 {
			t.Errorf("%s: no e2e latencies or throughput", r.ID)
		}
		if !r.Calibration && (r.Cost == nil || r.Cost.Commands == 0 || r.Cost.MemoryPerJobBytes <= 0) {
			t.Errorf("%s: cost %+v", r.ID, r.Cost)
		}
		for _, f := range append([]string{r.Files.HLog}, r.Files.HGRM["e2e"]) {
			if st, err := os.Stat(filepath.Join(outcome.Dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: file %q: %v", r.ID, f, err)
			}
		}
	}
	for _, f := range []string{"timeseries.csv", "e2e.png", "e2e.svg", "throughput.png", "lateness.png"} {
		if st, err := os.Stat(filepath.Join(outcome.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("file %s: %v", f, err)
		}
	}
	// The interval log reads back with HdrHistogram's own reader, and its
	// e2e intervals add up to the run's e2e count.
	hf, err := os.Open(filepath.Join(outcome.Dir, sum.Runs[1].Files.HLog))
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	rd := hdr.NewHistogramLogReader(hf)
	var e2e int64
	tag := sum.Runs[1].Label + ".e2e"
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("reading hlog: %v", err)
		}
		if h == nil {
			break
		}
		if h.Tag() == tag {
			e2e += h.TotalCount()
		}
	}
	if want := int64(sum.Runs[1].LatencyNs["e2e"]["count"]); e2e != want || want == 0 {
		t.Errorf("hlog %s intervals hold %d values, summary says %d", tag, e2e, want)
	}
	if !strings.Contains(out.String(), "Redis cost per job") || !strings.Contains(out.String(), "harness overhead") {
		t.Errorf("table output lacks sections:\n%s", out.String())
	}
}

func TestRunInterrupted(t *testing.T) {
	s, err := ParseScenario("int.yaml", []byte("duration: 30s\nwarmup: 200ms\ncalibration: off\nbackends: [null]\nproducers: {rate: 200}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(800*time.Millisecond, cancel)
	start := time.Now()
	outcome, err := Run(ctx, s, Options{OutDir: t.TempDir(), NoPlots: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("interrupted run took %v", d)
	}
	if !outcome.Interrupted || len(outcome.Summary.Runs) != 1 || outcome.Summary.Runs[0].Status != StatusInterrupted {
		t.Fatalf("outcome %+v", outcome)
	}
	r := outcome.Summary.Runs[0]
	if r.Ledger.Acknowledged == 0 || r.Ledger.Lost != 0 || r.LatencyNs["e2e"]["count"] == 0 {
		t.Errorf("interrupted run lost its numbers: %+v", r.Ledger)
	}
	if _, err := os.Stat(filepath.Join(outcome.Dir, "summary.json")); err != nil {
		t.Error(err)
	}
}
