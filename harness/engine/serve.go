package engine

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/workerproc"
	"github.com/aebench/aebench/jobstore"
)

// histEvery is how often a worker sends its histograms.
const histEvery = time.Second

// ServeWorker is the body of a worker process (`aebench worker`): it runs
// one worker of pc's run on store with the same loop as in-process
// workers (or the store's own when pc.Serve), writes its events to stdout, and takes "arm <crash point>"
// commands on stdin; it returns when stdin closes (the coordinator is done
// with it). A worker armed at a crash point announces it and waits there
// for its SIGKILL.
func ServeWorker(pc workerproc.ProcessConfig, store jobstore.Store, stdin io.Reader, stdout io.Writer) error {
	cfg := pc.Config
	var err error
	// Distributions travel as text; the sampler is rebuilt here.
	if cfg.Workers.Handler, err = conditions.ParseDist(cfg.Workers.HandlerText); err != nil {
		return fmt.Errorf("handler %q: %w", cfg.Workers.HandlerText, err)
	}
	if err := cfg.RebuildPhaseHandlers(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pe := workerproc.NewPipe(stdout)
	e := &engine{cfg: cfg, store: store, wstore: store, events: pe, hardStop: make(chan struct{}),
		calls: callDeadlines{limit: finishTimeout}, warmEnd: time.Unix(0, pc.WarmEnd)}
	e.windowEnd.Store(pc.WindowEnd)
	pe.Measuring = e.measuring
	var wg sync.WaitGroup
	e.local = newLocalWorkers(e, &wg)
	e.local.ctx = ctx
	block := make(chan struct{}) // never closed: a worker at its crash point waits for SIGKILL
	e.ft = &faultRun{onPoint: func(_ *worker, ev faults.Event) {
		pe.Send(workerproc.Event{E: "point", Point: string(ev.Point), T: time.Now().UnixNano()})
		<-block
	}}
	e.workerDone = func(id string) { pe.Send(workerproc.Event{E: "done", ID: id}) }
	w, err := e.startProcessWorker(ctx, &wg, pc, store)
	if err != nil {
		return err
	}
	pe.Send(workerproc.Event{E: "ready", T: time.Now().UnixNano()})
	hists := &hist.Set{}
	flush := func() {
		e.recMu.Lock()
		rs := append([]*hist.Recorder(nil), e.recorders...)
		e.recMu.Unlock()
		for _, r := range rs {
			r.DrainInto(hists)
		}
		pe.SendHists(hists)
	}
	tick := time.NewTicker(histEvery)
	defer tick.Stop()
	wg.Go(func() {
		for {
			select {
			case <-e.hardStop:
				return
			case <-tick.C:
				flush()
			}
		}
	})
	workerproc.ReadCommands(stdin, func(point string) {
		ev := faults.Event{Point: faults.Point(point)}
		w.armed.Store(&ev)
	})
	close(e.hardStop)
	cancel()
	wg.Wait()
	flush()
	e.errMu.Lock()
	first := e.firstErr
	e.errMu.Unlock()
	if first != nil {
		// The coordinator notes it as its in-process workers' errors.
		pe.Send(workerproc.Event{E: "err", Msg: first.Error(), T: time.Now().UnixNano()})
	}
	// The count of Complete calls travels once, at the end (a killed
	// worker's is lost: complete_calls then undercounts).
	pe.Send(workerproc.Event{E: "calls", A: int(e.c.completeCalls.Load()), T: time.Now().UnixNano()})
	pe.SendCounts(workerproc.ErrorCounts{Claim: e.c.claimErrors.Load(), Complete: e.c.completeErrors.Load(), Fail: e.c.failErrors.Load(),
		Extend: e.c.extErrs.Load(), OOMCompletes: e.c.oomCompletes.Load(), OOMFails: e.c.oomFails.Load()})
	return nil
}

// startProcessWorker starts the process's worker: aebench's Claim loop, or
// with pc.Serve the store's own loop, which reports its jobs the same way.
func (e *engine) startProcessWorker(ctx context.Context, wg *sync.WaitGroup, pc workerproc.ProcessConfig, store jobstore.Store) (*worker, error) {
	if !pc.Serve {
		return e.startWorker(ctx, wg, pc.Index, pc.Gen), nil
	}
	sv, ok := store.(jobstore.Serving)
	if !ok {
		return nil, fmt.Errorf("serve: backend %s has no worker loop of its own (jobstore.Serving)", pc.Config.Backend.Name)
	}
	w := e.newWorker(ctx, pc.Index, pc.Gen)
	w.inflight = map[string]*faults.Affected{} // tracked, so that each job's end is reported ("done")
	e.serve(ctx, wg, sv, w)
	return w, nil
}
