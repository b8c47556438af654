package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/workerproc"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// ProcSetup says how to start worker processes: the run's conditions and
// where its queue lives.
type ProcSetup struct {
	Config   conditions.Config
	Queue    string
	Addr     string // the Redis, or the network-fault proxy
	Username string // an ACL user; "": the default one
	Password string
	// TLS is the rediss:// URL's TLS options (nil: plain TCP): a worker
	// process builds its own configuration from them.
	TLS     *rclient.TLSFiles
	Cluster bool
	// Logf receives the address remote workers are to connect to.
	Logf func(format string, args ...any)
}

// pointWait bounds how long a kill at a crash point waits for the worker
// to reach it; an idle worker is then killed where it is.
const pointWait = 5 * time.Second

// settleAgain is how long settleKilled waits before its second read-back
// of a killed worker's jobs.
const settleAgain = 50 * time.Millisecond

// procPool runs the `aebench worker` processes of a run: it starts them,
// reads their events into the run's ledger and counters, kills one at a
// crash point when the Injector asks, and replaces it.
type procPool struct {
	e     *engine
	setup *ProcSetup
	exe   string
	wg    *sync.WaitGroup
	rec   *hist.Recorder

	mu    sync.Mutex
	procs map[int]*workerProc // live processes by slot

	remote remoteSide
	// ext: the store's jobs run in its own worker loop (a peer's driver);
	// the processes are its, not `aebench worker`.
	ext jobstore.ExternalWorkers

	// A driver's processes start before the run's clock (prestart): its
	// runtime loads its packages for up to seconds, which would otherwise
	// eat the warm-up and leave a cold runtime in the measured window
	// (peer-check --drivers). Their events wait for armed, closed once
	// the run's times and fault tracker are set: a job a driver ran in
	// between waits in the pipe, never in a half-set engine.
	prestarted bool
	armed      chan struct{}
	arm        sync.Once
}

// workerProc is one worker process (or remote worker) and what it holds.
type workerProc struct {
	*workerproc.Proc
	slot, gen int
	mu        sync.Mutex
	inflight  map[string]*procJob
	point     chan struct{} // receives when the worker announces its crash point
	eof       chan struct{} // closed when its stdout ended (it exited)
	ready     bool          // it said ready (its reader's own)
}

// newWorkerProc is the coordinator's record of worker proc in slot.
func newWorkerProc(proc *workerproc.Proc, slot, gen int) *workerProc {
	return &workerProc{Proc: proc, slot: slot, gen: gen, inflight: map[string]*procJob{},
		point: make(chan struct{}, 1), eof: make(chan struct{})}
}

type procJob struct {
	faults.Affected
	token string
}

func newProcPool(e *engine, wg *sync.WaitGroup, s *ProcSetup) *procPool {
	p := &procPool{e: e, setup: s, wg: wg, rec: e.newRecorder(), procs: map[int]*workerProc{}, armed: make(chan struct{})}
	p.ext, _ = e.store.(jobstore.ExternalWorkers)
	return p
}

// prestart launches a driver's worker processes before the run's clock
// starts and waits until each is ready; Start then only arms them. Only
// a driver's: `aebench worker` is told the run's times at its start, and
// a Go binary starts in milliseconds.
func (p *procPool) prestart() error {
	if p.ext == nil {
		return nil
	}
	for i := 0; i < p.setup.Config.Workers.Processes; i++ {
		if _, err := p.start(i, 0); err != nil {
			p.Stop()
			return err
		}
	}
	p.prestarted = true
	return nil
}

// open lets the processes' events in (once).
func (p *procPool) open() { p.arm.Do(func() { close(p.armed) }) }

// Start launches the worker processes (unless prestarted) and waits until
// each has built its store.
func (p *procPool) Start(context.Context) error {
	p.open()
	if p.prestarted {
		if err := p.startRemote(); err != nil {
			p.Stop()
			return err
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("worker processes: %w", err)
	}
	p.exe = exe
	for i := 0; i < p.setup.Config.Workers.Processes; i++ {
		if _, err := p.start(i, 0); err != nil {
			p.Stop()
			return err
		}
	}
	if err := p.startRemote(); err != nil {
		p.Stop()
		return err
	}
	return nil
}

// start launches the worker process of slot with generation gen and
// waits until its store is built.
func (p *procPool) start(slot, gen int) (*workerProc, error) {
	cfg := p.setup.Config
	idx := cfg.Workers.Count - cfg.Workers.Processes + slot
	id := "w" + strconv.Itoa(idx)
	if gen > 0 {
		id += "." + strconv.Itoa(gen)
	}
	cmd, err := p.command(idx, gen)
	if err != nil {
		return nil, err
	}
	proc, events, ended, err := workerproc.Start(id, cmd)
	if err != nil {
		return nil, err
	}
	wp := newWorkerProc(proc, slot, gen)
	ready := p.serve(wp, events, ended)
	select {
	case <-ready:
	case <-wp.eof:
		return nil, fmt.Errorf("worker process %s exited at start: %s", wp.ID, strings.TrimSpace(wp.Stderr()))
	case <-time.After(startWait):
		_ = wp.Kill()
		return nil, fmt.Errorf("worker process %s did not start within %v: %s", wp.ID, startWait, strings.TrimSpace(wp.Stderr()))
	}
	p.mu.Lock()
	p.procs[slot] = wp
	p.mu.Unlock()
	return wp, nil
}

// startWait bounds a worker process's start (a driver's runtime loads its
// system's packages first, slowly on a busy machine).
const startWait = 60 * time.Second

// command is the process of worker idx: `aebench worker` with its
// configuration, or the driver's worker role for an ExternalWorkers store.
func (p *procPool) command(idx, gen int) (*exec.Cmd, error) {
	if p.ext != nil {
		wc := p.setup.Config.Workers
		cmd, err := p.ext.WorkerCommand(jobstore.WorkerSpec{Index: idx, Gen: gen, Concurrency: wc.Concurrency,
			Addr: p.setup.Addr, Password: p.setup.Password, Lease: wc.Lease, Faults: len(p.setup.Config.Faults) > 0})
		if err != nil {
			return nil, fmt.Errorf("worker process w%d: %w", idx, err)
		}
		return cmd, nil
	}
	return workerproc.Command(p.exe, p.processConfig(idx, gen))
}

// processConfig is what worker idx (replacement gen) is told.
func (p *procPool) processConfig(idx, gen int) workerproc.ProcessConfig {
	return workerproc.ProcessConfig{Config: p.setup.Config, Queue: p.setup.Queue, Addr: p.setup.Addr, Username: p.setup.Username,
		Password: p.setup.Password, TLS: p.setup.TLS,
		Cluster: p.setup.Cluster, Index: idx, Gen: gen, WarmEnd: p.e.warmEnd.UnixNano(), WindowEnd: p.e.windowEnd.Load(), Serve: p.e.served}
}

// serve reads wp's events from r in a goroutine of the pool until r ends,
// then runs ended and closes wp.eof (a remote worker's connection that
// ended before the stop is lost); the channel it returns closes when the
// worker reports ready.
func (p *procPool) serve(wp *workerProc, r io.Reader, ended func()) chan struct{} {
	ready := make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.read(wp, r, ready)
		ended()
		if wp.Local() && p.live(wp) {
			// Not killed by a fault (a kill takes it out of procs first),
			// not stopped: it died, and the jobs of its slot stop.
			p.e.errMu.Lock()
			p.e.workersDied = append(p.e.workersDied, fmt.Sprintf("%s: %s", wp.ID, lastLine(wp.Stderr())))
			p.e.errMu.Unlock()
		}
		close(wp.eof)
		if !wp.Local() && !p.remote.stopping.Load() {
			p.lost(wp)
		}
	}()
	return ready
}

// live says wp is still its slot's process: not killed by a fault, and the
// pool not stopped.
func (p *procPool) live(wp *workerProc) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.procs[wp.slot] == wp
}

// lastLine is the last non-empty line of s (a process's stderr).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// read feeds a worker's events into the ledger, counters and tracker.
func (p *procPool) read(wp *workerProc, r io.Reader, ready chan struct{}) {
	workerproc.ReadEvents(r, func(ev workerproc.Event) { p.event(wp, ev, ready) }, func(line string, err error) {
		p.e.noteErr(fmt.Errorf("worker process %s: bad event %q: %w", wp.ID, line, err))
	})
}

// event feeds one event of wp into the ledger, counters and tracker.
func (p *procPool) event(wp *workerProc, ev workerproc.Event, ready chan struct{}) {
	e := p.e
	at := time.Unix(0, ev.T)
	switch {
	case ev.E == "ready":
		close(ready)
		wp.ready = true
		return
	case wp.ready:
		<-p.armed // what a hello or an error at start says passes at once
	}
	switch ev.E {
	case "claimed":
		wp.mu.Lock()
		wp.inflight[ev.ID] = &procJob{Affected: faults.Affected{ID: ev.ID, Attempt: ev.A, ClaimedAt: at}, token: ev.Tok}
		wp.mu.Unlock()
		e.c.claimed.Add(1)
		e.c.inFlight.Add(1)
	case "started":
		p.started(wp, ev, at)
	case "completed":
		p.startedWith(wp, ev)
		p.finished(wp, ev.ID)
		jt := e.led.Completed(ev.ID, ev.A, at)
		e.c.completed.Add(1)
		if jt.Known && jt.Measured && ev.H != 0 {
			p.rec.Record(hist.TagAckWait, at.Sub(time.Unix(0, ev.H)))
		}
		if jt.Known && jt.Measured && !jt.Delayed && ev.A == 0 {
			p.rec.Record(hist.TagE2E, at.Sub(jt.Intended))
		}
	case "failed":
		p.startedWith(wp, ev)
		p.finished(wp, ev.ID)
		res := jobstore.FailResult{Status: jobstore.Status(ev.Status), RunAt: time.Unix(0, ev.RunAt)}
		if ev.Dead != nil {
			res.Status = jobstore.StatusScheduled
			if *ev.Dead {
				res.Status = jobstore.StatusFailed
			}
		}
		e.led.Failed(ev.ID, ev.A, res, at)
		if res.Status == jobstore.StatusFailed {
			e.c.dead.Add(1)
		} else {
			e.c.retried.Add(1)
		}
	case "unknown":
		e.rb.ResolveUnknown(ev.ID, ev.A, ev.Tok, at)
	case "fenced":
		e.led.Fenced(ev.ID, ev.A, at)
		e.c.fenced.Add(1)
	case "done":
		wp.mu.Lock()
		if wp.inflight[ev.ID] != nil {
			delete(wp.inflight, ev.ID)
			e.c.inFlight.Add(-1)
		}
		wp.mu.Unlock()
	case "calls":
		e.c.completeCalls.Add(int64(ev.A))
	case "counts":
		p.counts(ev)
	case "refused":
		e.led.CompleteRefused(ev.ID)
	case "err":
		e.noteErr(fmt.Errorf("worker %s: %s", wp.ID, ev.Msg))
	case "hist":
		p.mergeHist(wp, ev)
	case "point":
		select {
		case wp.point <- struct{}{}:
		default:
		}
	}
}

// counts adds a worker process's error counts to the run's.
func (p *procPool) counts(ev workerproc.Event) {
	var c workerproc.ErrorCounts
	if json.Unmarshal([]byte(ev.Msg), &c) != nil {
		return
	}
	k := &p.e.c
	k.claimErrors.Add(c.Claim)
	k.completeErrors.Add(c.Complete)
	k.failErrors.Add(c.Fail)
	k.extErrs.Add(c.Extend)
	k.oomCompletes.Add(c.OOMCompletes)
	k.oomFails.Add(c.OOMFails)
}

// startedWith records the start a driver's completed or failed event
// carries (S) as if its started event had come.
func (p *procPool) startedWith(wp *workerProc, ev workerproc.Event) {
	if ev.S == 0 {
		return
	}
	p.started(wp, workerproc.Event{E: "started", ID: ev.ID, A: ev.A, T: ev.S}, time.Unix(0, ev.S))
}

// started records a job's start in a worker process. A driver's worker
// reports no claim, so its start is the claim too. The queue wait and the
// lateness are the coordinator's: it alone knows when a job was due.
func (p *procPool) started(wp *workerProc, ev workerproc.Event, at time.Time) {
	e := p.e
	if ev.RD {
		e.c.redelivered.Add(1)
	}
	wp.mu.Lock()
	j := wp.inflight[ev.ID]
	if j == nil && p.ext != nil {
		j = &procJob{Affected: faults.Affected{ID: ev.ID, Attempt: ev.A, ClaimedAt: at}}
		wp.inflight[ev.ID] = j
		e.c.claimed.Add(1)
		e.c.inFlight.Add(1)
	}
	if j != nil {
		j.Started = true
	}
	wp.mu.Unlock()
	jt := e.led.Started(ev.ID, ev.A, at)
	e.ft.tracker.Started(ev.ID, at)
	e.c.started.Add(1)
	if jt.Known && jt.Measured && !jt.Due.IsZero() {
		p.rec.Record(hist.TagQueueWait, at.Sub(jt.Due))
		if jt.Scheduled {
			p.rec.Record(hist.TagLateness, at.Sub(jt.Due))
		}
	}
}

// finished ends a driver worker's hold on a job: its completed or failed
// event is its "done".
func (p *procPool) finished(wp *workerProc, id string) {
	if p.ext == nil {
		return
	}
	wp.mu.Lock()
	if wp.inflight[id] != nil {
		delete(wp.inflight, id)
		p.e.c.inFlight.Add(-1)
	}
	wp.mu.Unlock()
}

// InFlight lists the jobs the live processes hold.
func (p *procPool) InFlight() []faults.Affected {
	p.mu.Lock()
	ps := make([]*workerProc, 0, len(p.procs))
	for _, wp := range p.procs {
		ps = append(ps, wp)
	}
	p.mu.Unlock()
	var out []faults.Affected
	for _, wp := range ps {
		wp.mu.Lock()
		for _, j := range wp.inflight {
			out = append(out, j.Affected)
		}
		wp.mu.Unlock()
	}
	return out
}

// Crash is the Injector's worker_kill: SIGKILL a worker process at a crash
// point (or at once for Random), account for what it held, and start a new
// one after ReplaceAfter.
func (p *procPool) Crash(ctx context.Context, ev faults.Event) error {
	p.mu.Lock()
	var wp *workerProc
	if ev.Worker >= 0 {
		wp = p.procs[ev.Worker]
	} else if len(p.procs) > 0 {
		slots := make([]int, 0, len(p.procs))
		for s, wp := range p.procs {
			if wp.Local() { // a remote worker cannot be killed from here
				slots = append(slots, s)
			}
		}
		sort.Ints(slots)
		wp = p.procs[slots[p.e.ft.pick(len(slots))]]
	}
	if wp != nil && !wp.Local() {
		wp = nil
	}
	if wp != nil {
		delete(p.procs, wp.slot)
	}
	p.mu.Unlock()
	if wp == nil {
		return errors.New("no live local worker process (killed, not yet restarted)")
	}
	point := ev.Point
	if p.ext != nil {
		point = faults.Random // a driver has no crash points: killed where it is
	}
	if point.InLoop() {
		if err := wp.Arm(string(point)); err != nil {
			return fmt.Errorf("arm %s: %w", wp.ID, err)
		}
		t := time.NewTimer(pointWait)
		select {
		case <-wp.point:
		case <-t.C:
			point = faults.Random // idle: killed where it is
		case <-ctx.Done():
			point = faults.Random
		}
		t.Stop()
	}
	if err := wp.Kill(); err != nil {
		return fmt.Errorf("SIGKILL %s: %w", wp.ID, err)
	}
	// The kill's time is read once the signal is sent: the victim takes no
	// lease after it. Read before, a preemption of this goroutine between
	// the read and the signal (hundreds of ms on a loaded machine) let the
	// victim take hand-offs whose leases then began "after the kill", and
	// their dead letters read as leased to a claimer that never ran them
	// (faults.Tracker.Leased allows 50 ms of skew).
	at := time.Now()
	<-wp.eof // every event it wrote has been read
	ev.Point = point
	p.settleKilled(wp, ev, at)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		// replace_after counts from the kill: a driver's read-back of
		// what the killed worker held may take its time (Celery's asks
		// the live workers, 1.5 s), and must not delay the replacement.
		t := time.NewTimer(max(0, ev.Fault.ReplaceAfter-time.Since(at)))
		defer t.Stop()
		select {
		case <-p.e.hardStop:
			return
		case <-t.C:
		}
		if _, err := p.start(wp.slot, wp.gen+1); err != nil {
			p.e.noteErr(err)
		}
	}()
	return nil
}

// settleKilled accounts for the jobs a killed worker held. A worker killed
// between Complete (or a dead-lettering Fail) returning and its event
// reaching the pipe did finish the job: the read-back (engine.settle)
// finds the record finished under this claim's token and tells the
// ledger. The rest are the fault's affected jobs.
func (p *procPool) settleKilled(wp *workerProc, ev faults.Event, at time.Time) {
	e := p.e
	wp.mu.Lock()
	held := make([]*procJob, 0, len(wp.inflight))
	for _, j := range wp.inflight {
		held = append(held, j)
	}
	wp.inflight = map[string]*procJob{}
	wp.mu.Unlock()
	e.c.inFlight.Add(-int64(len(held)))
	var affected []faults.Affected
	for round := 0; round < 2 && len(held) > 0; round++ {
		if round > 0 {
			// A Complete (or a batch of them) the worker wrote just before
			// its death can still sit in Redis's input buffer: look again
			// once Redis has had time to run it.
			time.Sleep(settleAgain)
		}
		var left []*procJob
		for _, j := range held {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			rb := e.rb.Settle(ctx, j.ID, j.Attempt, j.token, at)
			cancel()
			if !rb.Settled {
				left = append(left, j)
			}
		}
		held = left
	}
	for _, j := range held {
		affected = append(affected, j.Affected)
	}
	e.ft.tracker.Fault(ev, wp.ID, at, affected)
}

// Stop ends every live worker: stdin closes, the worker finishes what it
// holds and exits; one still running after 5s is killed.
func (p *procPool) Stop() {
	p.open() // a reader held at the gate must see its process's end
	p.mu.Lock()
	ps := make([]*workerProc, 0, len(p.procs))
	for _, wp := range p.procs {
		ps = append(ps, wp)
	}
	p.procs = map[int]*workerProc{}
	p.mu.Unlock()
	p.remote.stopping.Store(true)
	for _, wp := range ps {
		wp.HangUp()
	}
	for _, wp := range ps {
		select {
		case <-wp.eof:
		case <-time.After(5 * time.Second):
			_ = wp.Kill()
			<-wp.eof
		}
	}
	p.stopRemote()
}

// mergeHist adds a worker's encoded histogram to the run's.
func (p *procPool) mergeHist(wp *workerProc, ev workerproc.Event) {
	t, ok := hist.TagOf(ev.Point)
	if !ok {
		p.e.noteErr(fmt.Errorf("worker %s: histogram of unknown tag %q", wp.ID, ev.Point))
		return
	}
	h, err := workerproc.DecodeHist(ev)
	if err != nil {
		p.e.noteErr(fmt.Errorf("worker %s: histogram %s: %w", wp.ID, ev.Point, err))
		return
	}
	p.rec.Merge(t, h)
}
