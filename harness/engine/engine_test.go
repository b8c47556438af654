package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/null"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/jobstore"
)

// shortRun is a mixed load small enough for tests: immediate and delayed
// jobs, failures with quick retries.
func shortRun(t *testing.T, overrides ...scenario.Override) conditions.RunSpec {
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
	s, err := scenario.ParseScenario("test.yaml", []byte(src), overrides...)
	if err != nil {
		t.Fatal(err)
	}
	return s.Runs()[0]
}

func newNull(t *testing.T, cfg conditions.Config) *null.Store {
	t.Helper()
	s, err := null.New(jobstore.Options{Backoff: jobstore.Backoff{Base: cfg.Store.BackoffBase, Max: cfg.Store.BackoffMax}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEngineNull(t *testing.T) {
	spec := shortRun(t)
	var lines atomic.Int64
	res := Run(context.Background(), spec, newNull(t, spec.Config), Hooks{Label: "null",
		Status: func(StatusLine) { lines.Add(1) }})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	l := res.Ledger
	if !l.OK || l.Lost != 0 || l.Acknowledged == 0 || l.Completed+l.DeadLettered != l.Acknowledged {
		t.Fatalf("ledger %+v", l)
	}
	if !res.Window.Drained {
		t.Error("not drained")
	}
	// About 400 jobs/s over 1.3s; allow for a slow machine.
	if l.Acknowledged < 300 || l.Acknowledged > 700 {
		t.Errorf("acknowledged %d jobs, want about 520", l.Acknowledged)
	}
	if c := res.Counters; c.Retried == 0 || c.Completed != l.Completed || c.Started != l.Executions {
		t.Errorf("counters %+v vs ledger %+v", c, l)
	}
	for _, tag := range []hist.Tag{hist.TagE2E, hist.TagLateness, hist.TagQueueWait, hist.TagEnqueue, hist.TagClaim, hist.TagComplete, hist.TagFail, hist.TagDispatch, hist.TagScheduleLag} {
		if h := res.Hists[tag]; h == nil || h.TotalCount() == 0 {
			t.Errorf("histogram %s is empty", tag)
		}
	}
	// Warm-up jobs are checked but not measured: fewer e2e values than
	// immediate first-attempt completions.
	if n := res.Hists[hist.TagE2E].TotalCount(); n >= l.Completed {
		t.Errorf("e2e recorded %d values for %d completions: warm-up not excluded", n, l.Completed)
	}
	if res.Throughput.Completed < 250 || res.Throughput.Completed > 600 {
		t.Errorf("throughput %.0f jobs/s, want about 400", res.Throughput.Completed)
	}
	if lines.Load() < 1 || len(res.Series) < 2 {
		t.Errorf("status lines %d, series points %d", lines.Load(), len(res.Series))
	}
}

// lossyStore acknowledges every 25th job without storing it.
type lossyStore struct {
	*null.Store
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
	return s.Store.Enqueue(ctx, keep...)
}

// eagerStore ignores RunAt: delayed jobs run at once.
type eagerStore struct{ *null.Store }

func (s eagerStore) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	for i := range jobs {
		jobs[i].RunAt = time.Time{}
	}
	return s.Store.Enqueue(ctx, jobs...)
}

func TestEngineCatchesBrokenStores(t *testing.T) {
	spec := shortRun(t, scenario.Override{Path: "drain", Value: "500ms"})
	res := Run(context.Background(), spec, &lossyStore{Store: newNull(t, spec.Config)}, Hooks{Label: "lossy"})
	if res.Ledger.OK || res.Ledger.Lost == 0 || res.Window.Drained {
		t.Errorf("lossy store: ledger %+v drained %v", res.Ledger, res.Window.Drained)
	}
	if want := res.Ledger.Acknowledged / 25; res.Ledger.Lost < want-1 || res.Ledger.Lost > want+1 {
		t.Errorf("lost %d, want about %d", res.Ledger.Lost, want)
	}
	res = Run(context.Background(), spec, eagerStore{newNull(t, spec.Config)}, Hooks{Label: "eager"})
	if res.Ledger.OK || res.Ledger.StartedEarly == 0 || res.Ledger.MaxEarlyNs < int64(40*time.Millisecond) {
		t.Errorf("eager store: ledger %+v", res.Ledger)
	}
}

func TestEngineClosedLoopAndHeartbeat(t *testing.T) {
	spec := shortRun(t)
	spec.Config.Producers.Mode = "closed"
	spec.Config.Producers.MaxBacklog = 50
	spec.Config.Workers.Heartbeat = true
	// A lease short of the longest handler, renewed at a tenth of it: a
	// heartbeat has 9/10 of the lease to land, so a loaded machine's
	// scheduling delays do not let a lease lapse.
	spec.Config.Workers.Lease = 200 * time.Millisecond
	spec.Config.Workers.HeartbeatInterval = 20 * time.Millisecond
	spec.Config.Workers.Handler = conditions.Dist{Kind: "uniform", A: 5 * time.Millisecond, B: 400 * time.Millisecond}
	res := Run(context.Background(), spec, newNull(t, spec.Config), Hooks{Label: "closed"})
	if !res.Ledger.OK || res.Ledger.Lost != 0 {
		t.Fatalf("ledger %+v", res.Ledger)
	}
	if res.Counters.Extends == 0 {
		t.Error("no heartbeats")
	}
	// Heartbeats keep 400ms handlers on a 200ms lease: nothing recovered.
	if res.Ledger.Recovered != 0 {
		t.Errorf("recovered %d jobs despite heartbeats", res.Ledger.Recovered)
	}
	if res.PeakBacklog > 50+int64(spec.Config.Producers.Count) {
		t.Errorf("closed loop backlog peaked at %d, bound 50", res.PeakBacklog)
	}
}

func TestEngineLeaseExpiryIsRecovered(t *testing.T) {
	spec := shortRun(t)
	spec.Config.Workers.Lease = 20 * time.Millisecond
	spec.Config.Workers.Fail = 0
	spec.Config.Workers.Handler = conditions.Dist{Kind: "constant", A: 40 * time.Millisecond}
	spec.Config.Producers.Rate = 100
	spec.Config.Producers.MaxRetries = 1
	spec.Config.Workers.RecoveryInterval = 10 * time.Millisecond
	res := Run(context.Background(), spec, newNull(t, spec.Config), Hooks{Label: "lease"})
	l := res.Ledger
	// Every job outlives its lease: recovered, re-run, then dead-lettered.
	if !l.OK || l.Recovered == 0 || l.Fenced == 0 || l.DeadLettered == 0 {
		t.Fatalf("ledger %+v", l)
	}
}

// TestSleeperPool: a returned Sleeper is lent again; after close none is
// kept (a late return is closed at once).
func TestSleeperPool(t *testing.T) {
	p := newSleeperPool(nil)
	a := p.get()
	p.put(a)
	if b := p.get(); b != a {
		t.Error("a returned Sleeper was not lent again")
	}
	p.put(a)
	p.close()
	p.put(p.get())
	if len(p.free) != 0 {
		t.Errorf("%d Sleepers kept after close", len(p.free))
	}
}
