package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/jobstore"
)

// interruptDrain bounds the drain after Ctrl-C: long enough to finish what
// is in flight, short enough that a user who pressed it is not kept waiting.
const interruptDrain = 3 * time.Second

// finishTimeout bounds a Complete or Fail call; they run on a context that
// Ctrl-C does not cancel, so a job whose handler ran is still acknowledged.
const finishTimeout = 10 * time.Second

// StatusLine is what the engine reports once a second.
type StatusLine struct {
	RunID      string
	Elapsed    time.Duration
	Phase      string // warmup, measure, drain
	EnqPerSec  float64
	DonePerSec float64
	Backlog    int64
	InFlight   int64
	E2EP99     time.Duration // measured so far; 0 before any
}

// costMeter takes Redis's cost of a run; nil for the null backend.
type costMeter interface {
	// begin runs before any load (reset stats, start the memory sampler).
	begin(ctx context.Context) error
	// mark is the start of the measured window.
	mark(ctx context.Context) error
	// end is the end of the window; jobs (completed in the window) is the
	// divisor for per-job costs, acked (so far) the one for memory.
	end(ctx context.Context, jobs, acked int64) error
	// finish stops sampling and returns the cost.
	finish() *CostReport
}

// engineHooks connect a run to its outputs.
type engineHooks struct {
	label string
	// mover: run a Promote loop (the store is a jobstore.Mover whose mode
	// leaves promotion to a background loop).
	mover  bool
	hlog   *hdr.HistogramLogWriter // nil: no interval log
	status func(StatusLine)
	cost   costMeter
	// wstore is the workers' store (through the network-fault proxy); nil: the store.
	wstore jobstore.Store
	// faults is the run's fault setup; nil: no faults.
	faults *faultSetup
}

// Counters are plain event counts of a run (all phases).
type Counters struct {
	EnqueueCalls   int64 `json:"enqueue_calls"`
	EnqueuedJobs   int64 `json:"enqueued_jobs"`
	EnqueueErrors  int64 `json:"enqueue_errors"`
	Throttled      int64 `json:"closed_loop_pauses"`
	ClaimCalls     int64 `json:"claim_calls"`
	ClaimEmpty     int64 `json:"claim_empty"`
	ClaimErrors    int64 `json:"claim_errors"`
	Claimed        int64 `json:"claimed"`
	Started        int64 `json:"started"`
	Completed      int64 `json:"completed"`
	Retried        int64 `json:"retried"`
	DeadLettered   int64 `json:"dead_lettered"`
	Fenced         int64 `json:"fenced"`
	CompleteErrors int64 `json:"complete_errors"`
	FailErrors     int64 `json:"fail_errors"`
	Extends        int64 `json:"extends"`
	ExtendErrors   int64 `json:"extend_errors"`
	RecoverCalls   int64 `json:"recover_calls"`
	RecoverErrors  int64 `json:"recover_errors"`
	Recovered      int64 `json:"recovered"`
	RecoveredDead  int64 `json:"recovered_dead"`
	PromoteCalls   int64 `json:"promote_calls"`
	PromoteErrors  int64 `json:"promote_errors"`
	Promoted       int64 `json:"promoted"`
	// AckLost counts Complete or Fail calls that returned an error but had
	// been applied (read back from the store: the reply was lost).
	AckLost int64 `json:"ack_lost"`
}

type counters struct {
	enqCalls, enqJobs, enqErrors, throttled       atomic.Int64
	claimCalls, claimEmpty, claimErrors, claimed  atomic.Int64
	started, completed, retried, dead, fenced     atomic.Int64
	completeErrors, failErrors, extends, extErrs  atomic.Int64
	recoverCalls, recoverErrors, recovered, rdead atomic.Int64
	promoteCalls, promoteErrors, promoted         atomic.Int64
	inFlight                                      atomic.Int64
	ackLost                                       atomic.Int64
}

func (c *counters) snapshot() Counters {
	return Counters{c.enqCalls.Load(), c.enqJobs.Load(), c.enqErrors.Load(), c.throttled.Load(),
		c.claimCalls.Load(), c.claimEmpty.Load(), c.claimErrors.Load(), c.claimed.Load(),
		c.started.Load(), c.completed.Load(), c.retried.Load(), c.dead.Load(), c.fenced.Load(),
		c.completeErrors.Load(), c.failErrors.Load(), c.extends.Load(), c.extErrs.Load(),
		c.recoverCalls.Load(), c.recoverErrors.Load(), c.recovered.Load(), c.rdead.Load(),
		c.promoteCalls.Load(), c.promoteErrors.Load(), c.promoted.Load(), c.ackLost.Load()}
}

// SeriesPoint is one second of a run's time series.
type SeriesPoint struct {
	Second    int     `json:"second"`
	Phase     string  `json:"phase"`
	Enqueued  int64   `json:"enqueued"`
	Started   int64   `json:"started"`
	Completed int64   `json:"completed"`
	Retried   int64   `json:"retried"`
	Dead      int64   `json:"dead"`
	Backlog   int64   `json:"backlog"`
	InFlight  int64   `json:"in_flight"`
	E2EP50Ms  float64 `json:"e2e_p50_ms"`
	E2EP99Ms  float64 `json:"e2e_p99_ms"`
}

// engine runs one run: producers, workers, recoverer, mover and collector.
type engine struct {
	spec   RunSpec
	cfg    Config
	store  jobstore.Store
	wstore jobstore.Store // the workers' store
	hooks  engineHooks
	led    *Ledger
	events workerEvents // where workers report: the ledger, or a worker process's pipe
	ft     *faultRun    // nil without faults
	// workerDone, in a worker process, reports each job leaving the worker.
	workerDone func(id string)
	c          counters

	t0, warmEnd, stopAt time.Time
	windowEnd           atomic.Int64 // unix ns; moves earlier on interrupt
	payload             []byte

	recMu     sync.Mutex
	recorders []*Recorder

	// collector state (only the collector goroutine touches these, then run after it stops)
	total       histSet
	interval    histSet
	series      []SeriesPoint
	lastTick    time.Time
	lastCounts  Counters
	peakBacklog int64
	tickCost    time.Duration
	tickMax     time.Duration
	ticks       int
	hlogErr     error

	errMu    sync.Mutex
	firstErr error
	hardStop chan struct{}
	// resolvers read back jobs whose Complete or Fail outcome is unknown.
	resolvers sync.WaitGroup
}

func (e *engine) newRecorder() *Recorder {
	r := newRecorder()
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

// runResult is what the engine measured; the runner adds files and cost.
type runResult struct {
	hists       histSet
	series      []SeriesPoint
	ledger      LedgerReport
	counters    Counters
	window      Window
	throughput  Throughput
	interrupted bool
	err         error
	cost        *CostReport
	harness     HarnessCost
	startedAt   time.Time
	peakBacklog int64
	firstErr    error // the first store error of any kind, if any
	recovery    *faults.Summary
}

// Window says how long each phase lasted.
type Window struct {
	WarmupS   float64 `json:"warmup_s"`
	MeasuredS float64 `json:"measured_s"`
	DrainS    float64 `json:"drain_s"`
	Drained   bool    `json:"drained"`
}

// Throughput is in jobs/s over the measured window.
type Throughput struct {
	Offered   float64 `json:"offered_per_s"` // open loop: the planned rate; closed: 0
	Enqueued  float64 `json:"enqueued_per_s"`
	Completed float64 `json:"completed_per_s"`
}

// HarnessCost is the harness's own work during a run.
type HarnessCost struct {
	CollectorTickMeanNs int64 `json:"collector_tick_mean_ns"`
	CollectorTickMaxNs  int64 `json:"collector_tick_max_ns"`
	Ticks               int   `json:"ticks"`
}

func runEngine(ctx context.Context, spec RunSpec, store jobstore.Store, hooks engineHooks) *runResult {
	cfg := spec.Config
	e := &engine{spec: spec, cfg: cfg, store: store, wstore: store, hooks: hooks, led: NewLedger(), hardStop: make(chan struct{})}
	e.events = ledgerEvents{Ledger: e.led, resolve: e.resolveUnknown}
	if hooks.wstore != nil {
		e.wstore = hooks.wstore
	}
	e.payload = make([]byte, cfg.Producers.Payload)
	for i := range e.payload {
		e.payload[i] = 'a' + byte(i%26)
	}
	res := &runResult{}

	if hooks.cost != nil {
		if err := hooks.cost.begin(ctx); err != nil {
			res.err = err
			return res
		}
	}
	e.t0 = time.Now()
	res.startedAt = e.t0
	e.warmEnd = e.t0.Add(cfg.Warmup)
	e.stopAt = e.warmEnd.Add(cfg.Duration)
	e.windowEnd.Store(e.stopAt.UnixNano())
	e.lastTick = e.t0

	// Workers run on a context that Ctrl-C does not cancel: they must keep
	// finishing acknowledged jobs through the drain.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	var workers, producers sync.WaitGroup
	var inj *faults.Injector
	injCtx, stopInj := context.WithCancel(workCtx)
	defer stopInj()
	if fs := hooks.faults; fs != nil {
		e.ft = newFaultRun(cfg.Seed, e.warmEnd, fs)
		e.ft.ctx, e.ft.wg = workCtx, &workers
		h := faults.Hooks{Tracker: e.ft.tracker, InFlight: e.ft.inFlight, Proxy: fs.proxy, CrashWorker: e.ft.crashWorker}
		if fs.redis != nil {
			h.Redis = fs.redis
		}
		if fs.recLoop != nil {
			fs.recLoop.tracker = e.ft.tracker
		}
		if fs.movLoop != nil {
			fs.movLoop.tracker = e.ft.tracker
		}
		h.CrashLoop = func(ev faults.Event) error {
			l := fs.recLoop
			if ev.Fault.Kind == faults.MoverCrash {
				l = fs.movLoop
			}
			if l == nil {
				return fmt.Errorf("no %s loop runs in this run", ev.Fault.Kind)
			}
			return l.arm(ev)
		}
		if fs.procs != nil {
			pool, err := e.startProcs(workCtx, &workers, fs.procs)
			if err != nil {
				res.err = err
				return res
			}
			e.ft.procs = pool
			h.KillWorker = pool.kill
		}
		inj = faults.NewInjector(h)
	}
	e.startWorkers(workCtx, &workers)
	e.startMaintenance(workCtx, &workers)
	if inj != nil {
		inj.Run(injCtx, e.t0, hooks.faults.events)
	}
	for p := 0; p < cfg.Producers.Count; p++ {
		producers.Add(1)
		go func() {
			defer producers.Done()
			e.produce(ctx, p)
		}()
	}
	collectorDone := make(chan struct{})
	stopCollector := make(chan struct{})
	go func() {
		defer close(collectorDone)
		e.collectLoop(stopCollector)
	}()

	// Warm-up, then the measured window.
	interrupted := !sleepUntil(ctx, e.warmEnd)
	var atWarm Counters
	if !interrupted {
		atWarm = e.c.snapshot()
		if hooks.cost != nil {
			if err := hooks.cost.mark(ctx); err != nil {
				e.noteErr(err)
			}
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
	measured := windowEnd.Sub(e.warmEnd)
	if measured < 0 {
		measured = 0
	}
	if measured > 0 {
		res.throughput.Enqueued = float64(atStop.EnqueuedJobs-atWarm.EnqueuedJobs) / measured.Seconds()
		res.throughput.Completed = float64(atStop.Completed-atWarm.Completed) / measured.Seconds()
	}
	if cfg.Producers.Mode == "open" {
		res.throughput.Offered = cfg.Producers.Rate
	}
	if hooks.cost != nil && measured > 0 {
		if err := hooks.cost.end(ctx, atStop.Completed-atWarm.Completed, atStop.EnqueuedJobs); err != nil {
			e.noteErr(err)
		}
	}

	// Drain: every acknowledged job must finish, within cfg.Drain.
	drainStart := time.Now()
	limit := cfg.Drain
	if interrupted {
		limit = min(limit, interruptDrain)
	}
	deadline := drainStart.Add(limit)
	tick := time.NewTicker(5 * time.Millisecond)
	for e.led.Outstanding() > 0 && time.Now().Before(deadline) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				deadline = minTime(deadline, time.Now().Add(interruptDrain))
			}
			// A done context keeps this case ready: fall back to the ticker.
			<-tick.C
		}
	}
	tick.Stop()
	res.window = Window{WarmupS: min(cfg.Warmup, time.Since(e.t0)).Seconds(), MeasuredS: measured.Seconds(),
		DrainS: time.Since(drainStart).Seconds(), Drained: e.led.Outstanding() == 0}
	stopInj()
	stopWork()
	close(e.hardStop)
	workers.Wait()
	e.resolvers.Wait()
	if inj != nil {
		inj.Wait()
	}
	close(stopCollector)
	<-collectorDone

	if hooks.cost != nil {
		res.cost = hooks.cost.finish()
	}
	res.hists = e.total
	res.series = e.series
	res.ledger = e.led.CheckWith(cfg.LostAllowed())
	if e.ft != nil {
		e.ft.finish()
		sum, h := e.ft.tracker.Finish(e.led.IsLost)
		res.recovery = &sum
		if h.TotalCount() > 0 {
			res.hists[TagRecovery] = h
		}
	}
	res.counters = e.c.snapshot()
	res.interrupted = interrupted
	res.peakBacklog = e.peakBacklog
	if e.ticks > 0 {
		res.harness = HarnessCost{CollectorTickMeanNs: int64(e.tickCost) / int64(e.ticks), CollectorTickMaxNs: int64(e.tickMax), Ticks: e.ticks}
	}
	e.errMu.Lock()
	// Errors only fail the run when nothing got through: a few timeouts
	// under overload are a measurement, not an infrastructure failure.
	if e.firstErr != nil && res.counters.EnqueuedJobs == 0 {
		res.err = e.firstErr
	}
	e.errMu.Unlock()
	if e.hlogErr != nil && res.err == nil {
		res.err = e.hlogErr
	}
	res.firstErr = e.firstErr
	return res
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

// ---- producers -------------------------------------------------------------

func (e *engine) produce(ctx context.Context, p int) {
	cfg := e.cfg.Producers
	rec := e.newRecorder()
	rng := rand.New(rand.NewPCG(uint64(e.cfg.Seed), uint64(p)+1))
	open := cfg.Mode == "open"
	// Calls per second for this producer, and the first planned call: spread
	// the producers' phases so constant arrivals do not come in bursts.
	callRate := cfg.Rate / float64(cfg.Count) / float64(cfg.Batch)
	gap := func() time.Duration {
		mean := float64(time.Second) / callRate
		if cfg.Arrivals == "poisson" {
			return time.Duration(rng.ExpFloat64() * mean)
		}
		return time.Duration(mean)
	}
	next := e.t0
	if open {
		next = e.t0.Add(time.Duration(float64(time.Second) / callRate * float64(p) / float64(cfg.Count)))
		if cfg.Arrivals == "poisson" {
			next = e.t0.Add(gap())
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	prefix := "p" + strconv.Itoa(p) + "-"
	var seq int64
	jobs := make([]jobstore.NewJob, cfg.Batch)
	planned := make([]PlannedJob, cfg.Batch)
	ids := make([]string, cfg.Batch)
	for {
		if open {
			if !next.Before(e.stopAt) {
				return
			}
			if d := time.Until(next); d > 0 {
				if !preciseSleep(d, ctx.Done(), timer) {
					return
				}
			}
			if ctx.Err() != nil {
				return
			}
		} else {
			for e.led.Outstanding() >= int64(cfg.MaxBacklog) && time.Now().Before(e.stopAt) && ctx.Err() == nil {
				e.c.throttled.Add(1)
				time.Sleep(time.Millisecond)
			}
			next = time.Now()
			if !next.Before(e.stopAt) || ctx.Err() != nil {
				return
			}
		}
		intended := next
		measured := !intended.Before(e.warmEnd)
		for i := range jobs {
			seq++
			id := prefix + strconv.FormatInt(seq, 10)
			jr := jobRand(e.cfg.Seed, id, -1)
			var runAt time.Time
			if cfg.Delayed > 0 && jr.float() < cfg.Delayed {
				// The store keeps milliseconds: ask for a whole millisecond, so
				// "started before RunAt" is judged on what the store was told.
				runAt = intended.Add(cfg.Delay.Sample(jr.float(), jr.float())).Truncate(time.Millisecond)
			}
			jobs[i] = jobstore.NewJob{ID: id, Name: "bench", Payload: e.payload, RunAt: runAt, MaxRetries: cfg.MaxRetries}
			planned[i] = PlannedJob{ID: id, Intended: intended, RunAt: runAt, Measured: measured}
			ids[i] = id
		}
		callStart := time.Now()
		if open && measured {
			rec.Record(TagScheduleLag, callStart.Sub(intended))
		}
		e.led.Planned(planned, callStart)
		// Ctrl-C must not turn an Enqueue in flight into an unknown outcome.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		err := e.store.Enqueue(cctx, jobs...)
		cancel()
		end := time.Now()
		e.c.enqCalls.Add(1)
		if e.measuring(callStart) {
			rec.Record(TagEnqueue, end.Sub(callStart))
		}
		if err != nil {
			e.led.EnqueueFailed(ids)
			e.c.enqErrors.Add(1)
			e.noteErr(err)
			if errors.Is(err, jobstore.ErrInvalid) {
				return // every later call would fail the same way
			}
			if !open {
				// A closed loop must not spin on a Redis that is down.
				sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
			}
		} else {
			e.led.Acked(ids)
			e.c.enqJobs.Add(int64(len(ids)))
		}
		if open {
			next = next.Add(gap())
		}
	}
}

// ---- workers ---------------------------------------------------------------

type workItem struct {
	c         jobstore.Claimed
	claimedAt time.Time
}

// worker is one claim loop with its executors. In a run without faults its
// stop channel is the engine's hard stop and nothing else is used; with
// faults it can crash at a crash point (see crashAt) and tracks its jobs in
// flight for the recovery measurement.
type worker struct {
	id   string
	idx  int
	gen  int
	rec  *Recorder
	stop <-chan struct{} // closed at the hard stop, or when the worker crashes
	ctx  context.Context // the claim loop's context: ends on crash too
	quit func()

	dead  atomic.Bool
	armed atomic.Pointer[faults.Event]

	mu       sync.Mutex
	inflight map[string]*faults.Affected // nil unless faults are scheduled
	// onDone, in a worker process, tells the coordinator a job left the worker.
	onDone func(id string)
}

func (w *worker) track(c []jobstore.Claimed) {
	if w.inflight == nil {
		return
	}
	w.mu.Lock()
	for _, x := range c {
		w.inflight[x.Lease.JobID] = &faults.Affected{ID: x.Lease.JobID, Attempt: x.Lease.Attempt}
	}
	w.mu.Unlock()
}

func (w *worker) markStarted(id string) {
	if w.inflight == nil {
		return
	}
	w.mu.Lock()
	if a := w.inflight[id]; a != nil {
		a.Started = true
	}
	w.mu.Unlock()
}

func (w *worker) untrack(id string) {
	if w.inflight == nil {
		return
	}
	if w.onDone != nil {
		w.onDone(id)
	}
	w.mu.Lock()
	delete(w.inflight, id)
	w.mu.Unlock()
}

func (w *worker) snapshot() []faults.Affected {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]faults.Affected, 0, len(w.inflight))
	for _, a := range w.inflight {
		out = append(out, *a)
	}
	return out
}

func (e *engine) startWorkers(ctx context.Context, wg *sync.WaitGroup) {
	wc := e.cfg.Workers
	for w := 0; w < wc.Count-wc.Processes; w++ {
		e.startWorker(ctx, wg, w, 0)
	}
}

// startWorker starts worker idx (generation gen: replacements of a crashed
// worker count up).
func (e *engine) startWorker(ctx context.Context, wg *sync.WaitGroup, idx, gen int) *worker {
	wc := e.cfg.Workers
	w := &worker{idx: idx, gen: gen, id: "w" + strconv.Itoa(idx), rec: e.newRecorder(), stop: e.hardStop, ctx: ctx, quit: func() {}}
	if gen > 0 {
		w.id += "." + strconv.Itoa(gen)
	}
	w.onDone = e.workerDone
	if e.ft != nil {
		w.inflight = map[string]*faults.Affected{}
		stop := make(chan struct{})
		cctx, cancel := context.WithCancel(ctx)
		var once sync.Once
		w.ctx, w.stop = cctx, stop
		w.quit = func() { once.Do(func() { cancel(); close(stop) }) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-e.hardStop:
				w.quit()
			case <-stop:
			}
		}()
		e.ft.addWorker(w)
	}
	slots := make(chan struct{}, wc.Concurrency)
	work := make(chan workItem, wc.Concurrency)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		e.fetch(w, slots, work)
	}()
	for x := 0; x < wc.Concurrency; x++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.execute(ctx, w, slots, work)
		}()
	}
	return w
}

// crashAt is a crash point in the worker loop: true when the worker has
// crashed (here or before) and the caller must drop the job without
// acking. Without faults it is one nil check.
func (e *engine) crashAt(w *worker, p faults.Point) bool {
	if e.ft == nil {
		return false
	}
	if w.dead.Load() {
		return true
	}
	ev := w.armed.Load()
	if ev == nil || ev.Point != p || !w.armed.CompareAndSwap(ev, nil) {
		return w.dead.Load()
	}
	e.ft.reached(e, w, *ev)
	return true
}

// armedAt reports whether a crash is armed at p on w.
func (e *engine) armedAt(w *worker, p faults.Point) bool {
	if e.ft == nil {
		return false
	}
	ev := w.armed.Load()
	return ev != nil && ev.Point == p
}

// abandon drops a job a crashed (or hard-stopped) worker held: no event, no
// ack; its lease runs out and the recoverer takes it back.
func (e *engine) abandon(w *worker, id string, slots <-chan struct{}) {
	w.untrack(id)
	e.c.inFlight.Add(-1)
	<-slots
}

// claimTimeout bounds a Claim in a run with faults: a black-holed or
// paused Redis must not hang a worker past its wait.
const claimTimeout = 5 * time.Second

// fetch claims jobs while the worker has free slots.
func (e *engine) fetch(w *worker, slots chan struct{}, work chan<- workItem) {
	wc := e.cfg.Workers
	ctx := w.ctx
	release := func(n int) {
		for ; n > 0; n-- {
			<-slots
		}
	}
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1
	more:
		for n < wc.ClaimBatch {
			select {
			case slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		t0 := time.Now()
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if e.ft != nil {
			cctx, cancel = context.WithTimeout(ctx, wc.ClaimWait+claimTimeout)
		}
		got, err := e.wstore.Claim(cctx, jobstore.ClaimRequest{WorkerID: w.id, Max: n, Lease: wc.Lease, Wait: wc.ClaimWait})
		cancel()
		t1 := time.Now()
		e.c.claimCalls.Add(1)
		if err != nil {
			release(n)
			if ctx.Err() != nil {
				return
			}
			e.c.claimErrors.Add(1)
			e.noteErr(err)
			// Do not spin on a failing Redis.
			sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
			continue
		}
		release(n - len(got))
		if len(got) == 0 {
			e.c.claimEmpty.Add(1)
			continue
		}
		if e.measuring(t0) {
			w.rec.Record(TagClaim, t1.Sub(t0))
		}
		e.c.claimed.Add(int64(len(got)))
		e.c.inFlight.Add(int64(len(got)))
		w.track(got)
		e.events.Claimed(got, t1)
		if e.crashAt(w, faults.AfterClaim) {
			for _, c := range got {
				e.abandon(w, c.Lease.JobID, slots)
			}
			return
		}
		for _, c := range got {
			work <- workItem{c: c, claimedAt: t1}
		}
	}
}

// execute runs claimed jobs: the handler, then Complete or Fail.
func (e *engine) execute(ctx context.Context, w *worker, slots <-chan struct{}, work <-chan workItem) {
	wc := e.cfg.Workers
	rec := w.rec
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for it := range work {
		id, attempt := it.c.Lease.JobID, it.c.Lease.Attempt
		if e.ft != nil && w.dead.Load() {
			e.abandon(w, id, slots)
			continue
		}
		start := time.Now()
		jt := e.events.Started(id, attempt, start)
		book := time.Since(start)
		e.c.started.Add(1)
		if e.ft != nil {
			w.markStarted(id)
			e.ft.tracker.Started(id, start)
		}
		if e.measuring(it.claimedAt) {
			rec.Record(TagDispatch, start.Sub(it.claimedAt))
		}
		measured := jt.Known && jt.Measured
		if measured && !jt.Due.IsZero() {
			rec.Record(TagQueueWait, start.Sub(jt.Due))
			if jt.Scheduled {
				rec.Record(TagLateness, start.Sub(jt.Due))
			}
		}

		jr := jobRand(e.cfg.Seed, id, attempt)
		d := wc.Handler.Sample(jr.float(), jr.float())
		fail := wc.Fail > 0 && jr.float() < wc.Fail
		lease := it.c.Lease
		hs := time.Now()
		if e.armedAt(w, faults.InHandler) {
			// Crash halfway through the handler.
			if !e.runHandler(ctx, w, timer, d/2, &lease) || e.crashAt(w, faults.InHandler) {
				e.abandon(w, id, slots)
				continue
			}
			d -= d / 2
		}
		if !e.runHandler(ctx, w, timer, d, &lease) || e.crashAt(w, faults.AfterHandler) {
			// Hard stop after the drain, or a crash: abandon the job where it is.
			e.abandon(w, id, slots)
			continue
		}
		he := time.Now()
		if measured {
			rec.Record(TagHandler, he.Sub(hs))
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		if fail {
			fr, err := e.wstore.Fail(fctx, lease, "aebench: injected handler failure")
			fe := time.Now()
			if e.measuring(he) {
				rec.Record(TagFail, fe.Sub(he))
			}
			switch {
			case errors.Is(err, jobstore.ErrLeaseLost):
				e.c.fenced.Add(1)
				e.events.Fenced(id, attempt, fe)
			case err != nil:
				e.c.failErrors.Add(1)
				e.noteErr(err)
				e.events.Unknown(id, attempt, lease.Token, fe)
			default:
				e.events.Failed(id, attempt, fr, fe)
				if fr.Status == jobstore.StatusFailed {
					e.c.dead.Add(1)
				} else {
					e.c.retried.Add(1)
				}
			}
		} else {
			err := e.wstore.Complete(fctx, lease, nil)
			ce := time.Now()
			if e.measuring(he) {
				rec.Record(TagComplete, ce.Sub(he))
			}
			switch {
			case errors.Is(err, jobstore.ErrLeaseLost):
				e.c.fenced.Add(1)
				e.events.Fenced(id, attempt, ce)
			case err != nil:
				e.c.completeErrors.Add(1)
				e.noteErr(err)
				e.events.Unknown(id, attempt, lease.Token, ce)
			default:
				b0 := time.Now()
				jt := e.events.Completed(id, attempt, ce)
				book += time.Since(b0)
				e.c.completed.Add(1)
				if jt.Known && jt.Measured && !jt.Delayed {
					if attempt == 0 {
						rec.Record(TagE2E, ce.Sub(jt.Intended))
						rec.Record(TagE2ENet, ce.Sub(jt.Intended)-he.Sub(hs))
					} else {
						rec.Record(TagE2ERetried, ce.Sub(jt.Intended))
					}
				}
			}
		}
		cancel()
		if measured {
			rec.Record(TagBookkeeping, book)
		}
		w.untrack(id)
		e.c.inFlight.Add(-1)
		<-slots
	}
}

// runHandler sleeps for d, extending the lease on the heartbeat interval
// when heartbeats are on; false when the run was hard-stopped or the
// worker crashed meanwhile.
func (e *engine) runHandler(ctx context.Context, w *worker, timer *time.Timer, d time.Duration, lease *jobstore.Lease) bool {
	wc := e.cfg.Workers
	interval := time.Duration(math.MaxInt64)
	if wc.Heartbeat {
		interval = wc.HeartbeatInterval
		if interval <= 0 {
			interval = wc.Lease / 3
		}
	}
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		if !preciseSleep(min(left, interval), w.stop, timer) {
			return false
		}
		if time.Now().Before(end) {
			if e.ft != nil && w.dead.Load() {
				return false // a crashed worker sends no more heartbeats
			}
			cctx, cancel := context.WithTimeout(ctx, finishTimeout)
			nl, err := e.wstore.Extend(cctx, *lease, wc.Lease)
			cancel()
			switch {
			case err == nil:
				*lease = nl
				e.c.extends.Add(1)
			case errors.Is(err, jobstore.ErrLeaseLost):
				e.c.fenced.Add(1)
				e.events.Fenced(lease.JobID, lease.Attempt, time.Now())
			default:
				e.c.extErrs.Add(1)
			}
		}
	}
}

// ---- maintenance -----------------------------------------------------------

// startMaintenance runs what the contract expects a deployment to run: a
// recoverer, and a mover when the store is a jobstore.Mover whose due jobs
// wait for one.
func (e *engine) startMaintenance(ctx context.Context, wg *sync.WaitGroup) {
	wc := e.cfg.Workers
	var recLoop, movLoop *loopCrash
	if e.ft != nil {
		recLoop, movLoop = e.ft.recLoop, e.ft.movLoop
	}
	rstore := e.store
	if recLoop != nil {
		rstore = recLoop.store
	}
	e.maintain(ctx, wg, maintLoop{name: "recoverer", tag: TagRecover, every: wc.RecoveryInterval, batch: wc.RecoveryBatch,
		crash: recLoop, calls: &e.c.recoverCalls, errs: &e.c.recoverErrors,
		call: func(ctx context.Context, t0 time.Time) (int, error) {
			r, err := rstore.Recover(ctx, wc.RecoveryBatch)
			if n := len(r.Requeued) + len(r.DeadLettered); err == nil && n > 0 {
				e.led.Recovered(r, t0)
				e.c.recovered.Add(int64(len(r.Requeued)))
				e.c.rdead.Add(int64(len(r.DeadLettered)))
			}
			return len(r.Requeued) + len(r.DeadLettered), err
		}})
	mover, ok := e.store.(jobstore.Mover)
	if !ok || !e.hooks.mover {
		return
	}
	if movLoop != nil {
		mover = movLoop.store.(jobstore.Mover)
	}
	e.maintain(ctx, wg, maintLoop{name: "mover", tag: TagPromote, every: wc.MoverInterval, batch: wc.MoverBatch,
		crash: movLoop, calls: &e.c.promoteCalls, errs: &e.c.promoteErrors,
		call: func(ctx context.Context, _ time.Time) (int, error) {
			n, err := mover.Promote(ctx, wc.MoverBatch)
			e.c.promoted.Add(int64(n))
			return n, err
		}})
}

// maintLoop is one maintenance loop: every tick it calls call until a call
// handles fewer than batch jobs, fails, or the run ends.
type maintLoop struct {
	name        string
	tag         Tag
	every       time.Duration
	batch       int
	crash       *loopCrash // nil unless a crash of this loop is scheduled
	calls, errs *atomic.Int64
	call        func(ctx context.Context, t0 time.Time) (int, error)
}

func (e *engine) maintain(ctx context.Context, wg *sync.WaitGroup, l maintLoop) {
	rec := e.newRecorder()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(l.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for ctx.Err() == nil {
				l.crash.begin()
				t0 := time.Now()
				n, err := l.call(ctx, t0)
				t1 := time.Now()
				l.calls.Add(1)
				if e.measuring(t0) {
					rec.Record(l.tag, t1.Sub(t0))
				}
				if err != nil {
					if !l.crash.crashed(ctx, e, err, l.name) && ctx.Err() == nil {
						l.errs.Add(1)
						e.noteErr(err)
					}
					break
				}
				if n < l.batch {
					break
				}
			}
		}
	}()
}

// ---- collector -------------------------------------------------------------

// collectLoop merges the recorders once a second: interval histograms go to
// the .hlog and the status line, and into the run's totals.
func (e *engine) collectLoop(stop <-chan struct{}) {
	for k := 1; ; k++ {
		timer := time.NewTimer(time.Until(e.t0.Add(time.Duration(k) * time.Second)))
		select {
		case <-stop:
			timer.Stop()
			e.collect(k, true)
			return
		case <-timer.C:
			e.collect(k, false)
		}
	}
}

func (e *engine) collect(k int, final bool) {
	began := time.Now()
	now := began
	e.recMu.Lock()
	recs := append([]*Recorder(nil), e.recorders...)
	e.recMu.Unlock()
	for _, r := range recs {
		r.drainInto(&e.interval)
	}
	if e.hooks.hlog != nil && e.hlogErr == nil {
		for t, h := range e.interval {
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			h.SetTag(e.hooks.label + "." + Tag(t).String())
			h.SetStartTimeMs(e.lastTick.UnixMilli())
			h.SetEndTimeMs(now.UnixMilli())
			if err := e.hooks.hlog.OutputIntervalHistogram(h); err != nil {
				e.hlogErr = err
				break
			}
		}
	}
	var p50, p99 float64
	if h := e.interval[TagE2E]; h != nil && h.TotalCount() > 0 {
		p50 = float64(h.ValueAtQuantile(50)) / 1e6
		p99 = float64(h.ValueAtQuantile(99)) / 1e6
	}
	e.interval.mergeInto(&e.total)

	cur := e.c.snapshot()
	secs := now.Sub(e.lastTick).Seconds()
	backlog := e.backlog()
	e.recMu.Lock()
	e.peakBacklog = max(e.peakBacklog, backlog)
	e.recMu.Unlock()
	phase := "measure"
	switch {
	case now.Before(e.warmEnd.Add(time.Millisecond)):
		phase = "warmup"
	case now.After(time.Unix(0, e.windowEnd.Load()).Add(time.Millisecond)):
		phase = "drain"
	}
	pt := SeriesPoint{Second: k, Phase: phase,
		Enqueued:  cur.EnqueuedJobs - e.lastCounts.EnqueuedJobs,
		Started:   cur.Started - e.lastCounts.Started,
		Completed: cur.Completed - e.lastCounts.Completed,
		Retried:   cur.Retried - e.lastCounts.Retried,
		Dead:      cur.DeadLettered + cur.RecoveredDead - e.lastCounts.DeadLettered - e.lastCounts.RecoveredDead,
		Backlog:   backlog, InFlight: e.c.inFlight.Load(), E2EP50Ms: p50, E2EP99Ms: p99}
	if !final || secs > 0.05 {
		e.series = append(e.series, pt)
	}
	if e.hooks.status != nil && !final && secs > 0 {
		sl := StatusLine{RunID: e.hooks.label, Elapsed: now.Sub(e.t0), Phase: phase,
			EnqPerSec: float64(pt.Enqueued) / secs, DonePerSec: float64(pt.Completed) / secs,
			Backlog: backlog, InFlight: pt.InFlight}
		if h := e.total[TagE2E]; h != nil && h.TotalCount() > 0 {
			sl.E2EP99 = time.Duration(h.ValueAtQuantile(99))
		}
		e.hooks.status(sl)
	}
	e.lastCounts = cur
	e.lastTick = now
	cost := time.Since(began)
	e.tickCost += cost
	e.tickMax = max(e.tickMax, cost)
	e.ticks++
}
