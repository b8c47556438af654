package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/readback"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
)

// interruptDrain bounds the drain after Ctrl-C: long enough to finish what
// is in flight, short enough that a user who pressed it is not kept waiting.
const interruptDrain = 3 * time.Second

// finishTimeout bounds a Complete or Fail call; they run on a context that
// Ctrl-C does not cancel, so a job whose handler ran is still acknowledged.
const finishTimeout = 10 * time.Second

// Hooks connect a run to its outputs.
type Hooks struct {
	Label string
	// Mover: run a Promote loop (the store is a jobstore.Mover whose mode
	// leaves promotion to a background loop).
	Mover bool
	// NoRecoverer: run no Recover loop (a store that keeps no leases, such
	// as the reference floor, has nothing to recover).
	NoRecoverer bool
	HLog        *hist.LogWriter // nil: no interval log
	Status      func(StatusLine)
	// Sample receives each second of the time series as the collector
	// closes it (on the wall clock, also under simulated time); nil: none.
	Sample func(SeriesPoint)
	// SampleHists fills SeriesPoint's latency buckets (E2EHist, ClaimHist
	// and their sums) for Sample: off unless an output asks for them.
	SampleHists bool
	Cost        CostMeter // nil: no cost taken (the null backend)
	// CostWholeRun: the cost window is the whole run, from before the
	// first enqueue to the drain's end, divided by every job completed
	// (Redis under a meter): each job's whole life is counted once, and
	// no job is cut by a window's edges, whose place a loaded machine
	// moves. Otherwise it is the measured window.
	CostWholeRun bool
	// WStore is the workers' store (through the network-fault proxy); nil: the store.
	WStore jobstore.Store
	// Faults is the run's fault setup; nil: no faults.
	Faults *FaultSetup
	// Procs starts worker processes (workers.processes); nil: none.
	Procs *ProcSetup
	// Speed of simulated time (0 or 1: real time). The engine runs the
	// scenario's RealTime configuration on the wall clock and reports in
	// simulated time: histograms, the ledger's early margins, recovery,
	// the window, rates and the time series (see Result.simulated).
	Speed float64
}

// engine runs one run: producers, workers, recoverer, mover and collector.
type engine struct {
	// rb settles the ledger against the store where events were cut off.
	rb     *readback.Reader
	spec   conditions.RunSpec
	cfg    conditions.Config
	store  jobstore.Store
	wstore jobstore.Store // the workers' store
	hooks  Hooks
	led    *ledger.Ledger
	events workerEvents // where workers report: the ledger, or a worker process's pipe
	ft     *faultRun    // nil without faults or worker processes
	local  *localWorkers
	groups []Workers // local first, then the worker processes
	// workerDone, in a worker process, reports each job leaving the worker.
	workerDone func(id string)
	c          counters

	t0, warmEnd, stopAt time.Time
	// calls: the deadline context of Enqueue, Complete and Fail.
	calls callDeadlines
	// usage: CPU and run-queue wait over the measured window.
	usage summary.HarnessCost
	// window is the measured window's jobs, length and client CPU, for
	// probeIdle's per-job part.
	window struct {
		jobs   int64
		length time.Duration
		cpu    time.Duration
	}
	stall     *health.StallMeter // simulated time only
	served    bool               // a jobstore.Serving store runs the jobs (served.go)
	windowEnd atomic.Int64       // unix ns; moves earlier on interrupt
	payload   []byte
	// base is the run's workload (a job's without phase overrides).
	base conditions.Workload

	recMu     sync.Mutex
	recorders []*hist.Recorder

	// collector state (only the collector goroutine touches these, then run after it stops)
	total    hist.Set
	interval hist.Set
	// sent counts the jobs of the Enqueue calls started in each second
	// from t0 (SeriesPoint.Sent).
	sent []atomic.Int64
	// byPhase: the latencies of each second of a profile's phase, merged
	// by phase name (the seconds the collector names for it).
	byPhase map[string]*hist.Set
	// byWindow: the latencies of each drift window (drift.windows).
	byWindow      []*hist.Set
	series        []SeriesPoint
	lastTick      time.Time
	lastRQ        time.Duration // the harness's run-queue wait at the last tick
	lastCPU       time.Duration // the harness's CPU time at the last tick
	lastRedisCPU  time.Duration // Redis's CPU time at the last tick
	lastRedisCmds int64         // Redis commands processed at the last tick
	// lastEvicted is Redis's evicted_keys at the last tick; evictedSeen
	// says it was read.
	lastEvicted int64
	evictedSeen bool
	lastCounts  summary.Counters
	lastFaults  int64
	peakBacklog int64
	tickCost    time.Duration
	tickMax     time.Duration
	ticks       int
	hlogErr     error

	errMu sync.Mutex
	// workersDied: worker processes that died on their own (procpool).
	workersDied []string
	firstErr    error
	hardStop    chan struct{}
}

// newReader is the run's read-back: its settlements count in the run's
// counters.
func (e *engine) newReader() *readback.Reader {
	return &readback.Reader{Store: e.store, Ledger: e.led, NoteErr: e.noteErr,
		Completed: func() { e.c.completed.Add(1) }, Dead: func() { e.c.dead.Add(1) }, AckLost: func() { e.c.ackLost.Add(1) }}
}

func (e *engine) newRecorder() *hist.Recorder {
	r := hist.NewRecorder(e.hooks.Speed)
	e.recMu.Lock()
	e.recorders = append(e.recorders, r)
	e.recMu.Unlock()
	return r
}

func (e *engine) noteErr(err error) {
	e.errMu.Lock()
	if e.firstErr == nil {
		e.firstErr = err
	}
	e.errMu.Unlock()
}

// measuring: a call that started at t falls in the measured window.
func (e *engine) measuring(t time.Time) bool {
	return !t.Before(e.warmEnd) && t.UnixNano() < e.windowEnd.Load()
}

// Result is what the engine measured; the runner adds files and cost.
type Result struct {
	// Prefill: the backlog loaded before the run (producers.prefill).
	Prefill *summary.PrefillResult
	Hists   hist.Set
	Series  []SeriesPoint
	// PhaseTallies: the ledger's judgement of each phase's jobs (by
	// intended time), in the order of the profile's phases.
	PhaseTallies []ledger.Tally
	// Mix: the ledger's split of the jobs by kind, tenant and failure
	// window (conditions.MixLayout); nil without a job mix or windows.
	Mix []ledger.Group
	// PhaseHists: e2e, queue-wait and lateness of each profile phase's
	// seconds, by phase name.
	PhaseHists map[string]*hist.Set
	// WindowHists are the latencies of each drift window, in order.
	WindowHists []*hist.Set
	Ledger      ledger.Report
	Counters    summary.Counters
	Window      summary.Window
	Throughput  summary.Throughput
	Interrupted bool
	// Err is what failed the run (infrastructure), if anything.
	Err         error
	Cost        *summary.CostReport
	Harness     summary.HarnessCost
	StartedAt   time.Time
	PeakBacklog int64
	FirstErr    error // the first store error of any kind, if any
	// WorkersDied lists the worker processes that exited during the run
	// without a fault killing them or the run stopping them, and why: the
	// jobs of their slots stopped, so the run fails.
	WorkersDied []string
	Recovery    *faults.Summary
	// Audit is what the store counted of its own design after the drain
	// (jobstore.Auditor), or nil; AuditErr why it could not.
	Audit    map[string]int64
	AuditErr string
	// Census is the store's key census after the drain
	// (jobstore.Censuser), or nil; CensusErr why it could not be taken.
	Census    *jobstore.Census
	CensusErr string
	// Snapshot sets a restart's losses under RDB beside the jobs
	// acknowledged after the last snapshot; nil without one.
	Snapshot *summary.SnapshotCheck
	// StallNote flags reruns a stall of the harness may explain
	// (simulated time only; see health.StallNote).
	StallNote string
	// Served: the store's own worker loop ran the jobs (servedWorkers).
	Served bool
}

// idleProbe is how long a drained open-loop run keeps its workers and
// collector running with no job left, to take the harness's fixed CPU per
// second apart from its cost per job.
const idleProbe = 300 * time.Millisecond

// Run runs one run of spec against store: producers, workers (in process
// and in worker processes), the maintenance loops, the collector and the
// fault schedule, then a bounded drain; it checks every job with the ledger.
func Run(ctx context.Context, spec conditions.RunSpec, store jobstore.Store, hooks Hooks) *Result {
	cfg := spec.Config
	cfg.PrepareMix()
	e := &engine{spec: spec, cfg: cfg, store: store, wstore: store, hooks: hooks, led: ledger.New(), hardStop: make(chan struct{}),
		calls: callDeadlines{limit: finishTimeout}}
	e.rb = e.newReader()
	e.events = ledgerEvents{Ledger: e.led, resolve: e.rb.ResolveUnknown}
	if hooks.WStore != nil {
		e.wstore = hooks.WStore
	}
	e.base = cfg.WorkloadOf(-1)
	e.payload = make([]byte, max(cfg.Producers.Payload, cfg.Producers.TraceData.MaxPayload(), maxPhasePayload(cfg)))
	for i := range e.payload {
		e.payload[i] = 'a' + byte(i%26)
	}
	res := &Result{}
	if res.Err = e.setUp(ctx, res); res.Err != nil {
		return res
	}
	// Workers run on a context that Ctrl-C does not cancel: they must keep
	// finishing acknowledged jobs through the drain.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	var workers sync.WaitGroup
	var procs *procPool
	if hooks.Procs != nil {
		procs = newProcPool(e, &workers, hooks.Procs)
		if res.Err = procs.prestart(); res.Err != nil {
			return res
		}
	}
	e.t0 = time.Now()
	res.StartedAt = e.t0
	e.warmEnd = e.t0.Add(cfg.Warmup)
	e.stopAt = e.warmEnd.Add(cfg.Duration)
	e.windowEnd.Store(e.stopAt.UnixNano())
	e.sent = make([]atomic.Int64, int((cfg.Warmup+cfg.Duration)/time.Second)+2)
	e.lastTick = e.t0
	if hooks.Speed > 1 {
		e.stall = health.StartStallMeter()
	}

	inj, err := e.startWorkers(workCtx, &workers, procs)
	if err != nil {
		res.Err = err
		return res
	}
	e.startMaintenance(workCtx, &workers)
	injCtx, stopInj := context.WithCancel(workCtx)
	defer stopInj()
	if inj != nil {
		inj.Run(injCtx, e.t0, hooks.Faults.Events)
	}
	col := e.startCollector()
	interrupted := e.load(ctx, res)
	interrupted = e.drain(ctx, res, interrupted)
	at := e.c.snapshot()
	e.endCost(ctx, true, at.Completed, at.EnqueuedJobs)
	if cfg.Producers.Mode == "open" && !interrupted && hooks.Faults == nil && hooks.Speed <= 1 && e.led.Outstanding() == 0 {
		e.probeIdle(ctx)
	}
	stopInj()
	stopWork()
	close(e.hardStop)
	for _, g := range e.groups {
		g.Stop()
	}
	workers.Wait()
	e.rb.Wait()
	if inj != nil {
		inj.Wait()
	}
	col.stop()
	res.Harness.MaxStallNs = int64(e.stall.Stop())
	e.finish(res, interrupted)
	res.Served = e.served
	res.simulated(hooks.Speed)
	return res
}

// setUp readies the run before its clock starts: external workers, the
// prefilled backlog, and the cost window's start.
func (e *engine) setUp(ctx context.Context, res *Result) error {
	if err := e.external(); err != nil {
		return err
	}
	pf, err := e.prefill(ctx)
	if err != nil {
		return err
	}
	res.Prefill = pf
	// Collect the load's garbage, and the previous run's, before the clock
	// starts: the heap pages they touched are then reused by the run's
	// allocations, which otherwise fault in fresh pages through the
	// warm-up and window (at GOGC=2000, scenarios/peer-check.yaml's floor:
	// 0.65-0.95 page faults a job at 244ee2d, 0.47-0.57 with this), and no
	// run pays for marking the one before it.
	runtime.GC()
	if e.hooks.Cost == nil {
		return nil
	}
	if err := e.hooks.Cost.Begin(ctx); err != nil {
		return err
	}
	return e.markCost(ctx, true)
}

// startWorkers starts the in-process workers and the worker processes
// (procs, made and perhaps prestarted by run), and the fault injector that
// acts on them; nil without faults.
func (e *engine) startWorkers(ctx context.Context, wg *sync.WaitGroup, procs *procPool) (*faults.Injector, error) {
	if e.hooks.Faults != nil || e.hooks.Procs != nil {
		// Worker processes feed the tracker too: what a killed process held
		// is measured as a fault's affected jobs.
		e.ft = newFaultRun(e.cfg.Seed, e.warmEnd, e.hooks.Faults)
	}
	local := newLocalWorkers(e, wg)
	e.local = local
	if sv, ok := e.servingStore(); ok {
		e.served = true
		e.groups = append(e.groups, &servedWorkers{e: e, wg: wg, sv: sv})
	} else {
		e.served = e.servesProcesses()
		e.groups = append(e.groups, local)
	}
	if procs != nil {
		e.groups = append(e.groups, procs)
	}
	for _, g := range e.groups {
		if err := g.Start(ctx); err != nil {
			for _, g := range e.groups {
				g.Stop()
			}
			return nil, err
		}
	}
	fs := e.hooks.Faults
	if fs == nil {
		return nil, nil
	}
	h := faults.Hooks{Tracker: e.ft.tracker, InFlight: e.inFlight, Proxy: fs.Proxy,
		CrashWorker: func(ev faults.Event) error { return local.Crash(ctx, ev) },
		Fired:       func(faults.Event) { e.c.faultsFired.Add(1) }}
	if fs.Redis != nil {
		h.Redis = fs.Redis
	}
	h.KillMaster, h.Partition, h.Ballast = fs.KillMaster, fs.Partition, fs.Ballast
	for _, l := range []*LoopCrash{fs.RecLoop, fs.MovLoop} {
		if l != nil {
			l.tracker = e.ft.tracker
		}
	}
	h.CrashLoop = func(ev faults.Event) error {
		l := fs.RecLoop
		if ev.Fault.Descriptor().Needs.Mover {
			l = fs.MovLoop
		}
		if l == nil {
			return fmt.Errorf("no %s loop runs in this run", ev.Fault.Kind)
		}
		return l.arm(ev)
	}
	if procs != nil {
		h.KillWorker = procs.Crash
	}
	return faults.NewInjector(h), nil
}

// inFlight lists every job in flight, in process and in worker processes.
func (e *engine) inFlight() []faults.Affected {
	var out []faults.Affected
	for _, g := range e.groups {
		out = append(out, g.InFlight()...)
	}
	return out
}

// load runs the producers through the warm-up and the measured window and
// takes the window's throughput and cost; true when Ctrl-C cut it short.
func (e *engine) load(ctx context.Context, res *Result) bool {
	cfg := e.cfg
	var producers sync.WaitGroup
	for p := 0; p < cfg.Producers.Count; p++ {
		producers.Add(1)
		go func() {
			defer producers.Done()
			e.produce(ctx, p)
		}()
	}
	interrupted := !sleepUntil(ctx, e.warmEnd)
	var atWarm summary.Counters
	var usage health.Usage
	if !interrupted {
		atWarm = e.c.snapshot()
		usage = health.Sample()
		if err := e.markCost(ctx, false); err != nil {
			e.noteErr(err)
		}
		interrupted = !sleepUntil(ctx, e.stopAt)
	}
	if interrupted {
		now := time.Now()
		if now.Before(e.stopAt) {
			e.windowEnd.Store(now.UnixNano())
		}
	}
	producers.Wait()
	windowEnd := time.Unix(0, e.windowEnd.Load())
	atStop := e.c.snapshot()
	measured := max(windowEnd.Sub(e.warmEnd), 0)
	e.window.cpu = usage.Since(&e.usage, atStop.Completed-atWarm.Completed, measured)
	e.window.jobs, e.window.length = atStop.Completed-atWarm.Completed, measured
	if measured > 0 {
		res.Throughput.Enqueued = float64(atStop.EnqueuedJobs-atWarm.EnqueuedJobs) / measured.Seconds()
		res.Throughput.Completed = float64(atStop.Completed-atWarm.Completed) / measured.Seconds()
	}
	if cfg.Producers.Mode == "open" {
		res.Throughput.Offered = cfg.Producers.Rate
	}
	if measured > 0 {
		e.endCost(ctx, false, atStop.Completed-atWarm.Completed, atStop.EnqueuedJobs)
	}
	res.Window.MeasuredS = measured.Seconds()
	return interrupted
}

// maxPhasePayload is the largest payload a phase's overrides ask for.
func maxPhasePayload(cfg conditions.Config) int {
	m := 0
	for _, p := range cfg.Phases {
		if p.Work != nil {
			m = max(m, p.Work.Payload)
		}
	}
	return m
}

// phaseEdges are the profile's phase boundaries in unix ns (none without
// phases).
func (e *engine) phaseEdges() []int64 {
	spans := e.cfg.Spans()
	if len(spans) == 0 {
		return nil
	}
	edges := []int64{e.t0.Add(spans[0].Start).UnixNano()}
	for _, sp := range spans {
		edges = append(edges, e.t0.Add(sp.End).UnixNano())
	}
	return edges
}

// finish fills res from what the run left once every loop has stopped.
func (e *engine) finish(res *Result, interrupted bool) {
	if e.hooks.Cost != nil {
		res.Cost = e.hooks.Cost.Finish()
	}
	res.Hists = e.total
	res.Series = e.series
	res.PhaseHists = e.byPhase
	res.WindowHists = e.byWindow
	e.rb.Outstanding()
	res.Audit, res.AuditErr = e.audit()
	res.Census, res.CensusErr = e.census()
	declared := e.declaredLoss()
	var unexplained []string
	if e.ft != nil {
		e.ft.finish(e.local)
		unexplained = e.attributeUnreported()
		e.led.SetCaught(e.ft.tracker.Caught, e.cfg.Expect.DeadUnstarted == "allowed")
	} else {
		e.led.SetCaught(nil, e.cfg.Expect.DeadUnstarted == "allowed")
	}
	if e.store.Capabilities().Has(jobstore.CapSeedVariant) {
		res.Ledger = e.led.CheckSeedVariant()
	} else {
		res.Ledger = e.led.CheckWith(e.cfg.LostAllowed() || declared != "")
	}
	res.Ledger.UnfinishedLater = e.rb.Later()
	res.Ledger.DeadUnstartedLeases = unexplained
	res.Snapshot = e.snapshotCheck(res.Ledger.Lost)
	res.PhaseTallies = e.led.Tallies(e.phaseEdges())
	if m := e.cfg.MixLayout(); m.N() > 0 {
		timed := func(g int) bool { return g >= m.QueueGroup(0) && g < m.QueueGroup(m.Queues) }
		res.Mix = e.led.Split(m.N(), ledger.SplitOptions{Speed: e.cfg.Speed(), WindowEnd: time.Unix(0, e.windowEnd.Load()), T0: e.t0, Timed: timed}, e.cfg.Classes(e.t0))
	}
	if e.ft != nil {
		sum, h := e.ft.tracker.Finish(e.led.Outcome)
		if declared != "" && !e.cfg.LostAllowed() {
			e.judgeDeclaredLoss(&res.Ledger, declared, sum)
		}
		h = timedFaults(&sum, h, e.cfg.Warmup, e.hooks.Speed)
		res.Recovery = &sum
		if h.TotalCount() > 0 {
			res.Hists[hist.TagRecovery] = h
			e.logRecovery(h)
		}
	}
	res.Counters = e.c.snapshot()
	res.Interrupted = interrupted
	res.PeakBacklog = e.peakBacklog
	if e.ticks > 0 {
		res.Harness.CollectorTickMeanNs, res.Harness.CollectorTickMaxNs, res.Harness.Ticks = int64(e.tickCost)/int64(e.ticks), int64(e.tickMax), e.ticks
	}
	res.StallNote = health.StallNote(time.Duration(res.Harness.MaxStallNs), e.cfg.Workers.Lease, res.Ledger.DuplicateReruns,
		res.Counters.Recovered+res.Counters.RecoveredDead, e.hooks.Speed)
	res.Harness.ClientCPUUsPerJob, res.Harness.RunQueueWaitMsPerS = e.usage.ClientCPUUsPerJob, e.usage.RunQueueWaitMsPerS
	res.Harness.HostStealPercent = e.usage.HostStealPercent
	res.Harness.ClientAllocsPerJob, res.Harness.ClientAllocBytesPerJob = e.usage.ClientAllocsPerJob, e.usage.ClientAllocBytesPerJob
	res.Harness.ClientFixedUsPerS, res.Harness.ClientPerJobUs = e.usage.ClientFixedUsPerS, e.usage.ClientPerJobUs
	e.errMu.Lock()
	// Errors only fail the run when nothing got through: a few timeouts
	// under overload are a measurement, not an infrastructure failure.
	if e.firstErr != nil && res.Counters.EnqueuedJobs == 0 {
		res.Err = e.firstErr
	}
	e.errMu.Unlock()
	if e.hlogErr != nil && res.Err == nil {
		res.Err = e.hlogErr
	}
	res.FirstErr = e.firstErr
	e.errMu.Lock()
	res.WorkersDied = slices.Clone(e.workersDied)
	e.errMu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (e *engine) backlog() int64 {
	return max(0, e.led.Outstanding()-e.c.inFlight.Load())
}

// logRecovery writes the recovery histogram to the interval log as one
// interval over the whole run: its samples are known only once every
// affected job has started again (or was found lost), after the last
// once-a-second interval.
func (e *engine) logRecovery(h *hdr.Histogram) {
	if e.hooks.HLog == nil || e.hlogErr != nil {
		return
	}
	h.SetTag(e.hooks.Label + "." + hist.TagRecovery.String())
	h.SetStartTimeMs(e.t0.UnixMilli())
	h.SetEndTimeMs(time.Now().UnixMilli())
	e.hlogErr = e.hooks.HLog.OutputIntervalHistogram(h)
}
