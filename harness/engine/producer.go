package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func (e *engine) produce(ctx context.Context, p int) {
	cfg := e.cfg.Producers
	if cfg.TraceData != nil && cfg.Mode == "open" {
		e.produceTrace(ctx, p)
		return
	}
	pr := &producer{e: e, rec: e.newRecorder(), rng: rand.New(rand.NewPCG(uint64(e.cfg.Seed), uint64(p)+1)),
		open: cfg.Mode == "open", prefix: "p" + strconv.Itoa(p) + "-",
		// Calls per second for this producer.
		callRate: cfg.Rate / float64(cfg.Count) / float64(cfg.Batch),
		jobs:     make([]jobstore.NewJob, cfg.Batch), planned: make([]ledger.PlannedJob, cfg.Batch), ids: make([]string, cfg.Batch)}
	// The first planned call: spread the producers' phases so constant
	// arrivals do not come in bursts.
	next := e.t0
	if pr.open {
		next = e.t0.Add(time.Duration(float64(time.Second) / pr.callRate * float64(p) / float64(cfg.Count)))
		if cfg.Arrivals == "poisson" {
			next = e.t0.Add(pr.gapAt(e.t0))
		}
	}
	timer := clock.NewSleeper(ctx.Done())
	defer timer.Close()
	for {
		var ok bool
		if next, ok = pr.wait(ctx, timer, next); !ok {
			return
		}
		if !pr.call(ctx, next) {
			return
		}
		if pr.open {
			next = next.Add(pr.gapAt(next))
		}
	}
}

// producer is one producer's loop state.
type producer struct {
	e        *engine
	rec      *hist.Recorder
	rng      *rand.Rand
	open     bool
	prefix   string
	callRate float64
	seq      int64
	jobs     []jobstore.NewJob
	planned  []ledger.PlannedJob
	ids      []string
}

// gap is the time to the next planned call at a steady rate.
func (pr *producer) gap() time.Duration {
	mean := float64(time.Second) / pr.callRate
	if pr.e.cfg.Producers.Arrivals == "poisson" {
		return time.Duration(pr.rng.ExpFloat64() * mean)
	}
	return time.Duration(mean)
}

// gapAt is the time from the planned call at t to the next, following the
// load profile (conditions.Config.RateAt) when the scenario has phases:
// constant arrivals space calls at the rate of the moment; Poisson ones
// are thinned from the profile's highest rate (Lewis and Shedler), so a
// ramp or a burst has the arrivals of a Poisson process of that rate.
func (pr *producer) gapAt(t time.Time) time.Duration {
	c := pr.e.cfg
	if len(c.Phases) == 0 {
		return pr.gap()
	}
	per := float64(c.Producers.Count * c.Producers.Batch)
	rate := func(at time.Time) float64 { return c.RateAt(at.Sub(pr.e.t0)) / per }
	if c.Producers.Arrivals != "poisson" {
		return time.Duration(float64(time.Second) / rate(t))
	}
	top := c.MaxRate() / per
	at := t
	for {
		at = at.Add(time.Duration(pr.rng.ExpFloat64() / top * float64(time.Second)))
		if pr.rng.Float64()*top <= rate(at) {
			return at.Sub(t)
		}
	}
}

// wait waits for the next call: until its planned time (open loop), or
// until the backlog is under producers.max_backlog (closed loop, which
// plans the call at once). False: the run's enqueueing is over.
func (pr *producer) wait(ctx context.Context, timer *clock.Sleeper, next time.Time) (time.Time, bool) {
	e := pr.e
	if pr.open {
		if !next.Before(e.stopAt) {
			return next, false
		}
		if d := time.Until(next); d > 0 && !timer.For(d) {
			return next, false
		}
		return next, ctx.Err() == nil
	}
	for pr.full() && time.Now().Before(e.stopAt) && ctx.Err() == nil {
		e.c.throttled.Add(1)
		time.Sleep(time.Millisecond)
	}
	next = time.Now()
	return next, next.Before(e.stopAt) && ctx.Err() == nil
}

// full says a closed loop's backlog is at its bound (producers.max_backlog
// unfinished jobs), or a depth loop's due backlog at its depth.
func (pr *producer) full() bool {
	e := pr.e
	if e.cfg.Producers.Mode == "depth" {
		return e.backlog()-e.led.Delayed(time.Now()) >= int64(e.cfg.Producers.Depth)
	}
	return e.led.Outstanding() >= int64(e.cfg.Producers.MaxBacklog)
}

// call makes one Enqueue call of a batch intended at intended and books it
// in the ledger. False: stop producing (a call the store refuses as
// invalid would be refused every time).
func (pr *producer) call(ctx context.Context, intended time.Time) bool {
	e, cfg := pr.e, pr.e.cfg.Producers
	measured := !intended.Before(e.warmEnd)
	// The phase's workload (the run's without phases or overrides).
	w, name := e.base, "bench"
	if len(e.cfg.Phases) > 0 {
		phase := e.cfg.PhaseIndexAt(intended.Sub(e.t0))
		w, name = e.cfg.WorkloadOf(phase), e.cfg.JobName(phase)
	}
	since := intended.Sub(e.t0)
	if len(e.cfg.FailWindows) > 0 {
		name = e.cfg.JobNameAt(e.cfg.PhaseIndexAt(since), e.cfg.WindowAt(since))
	}
	for i := range pr.jobs {
		pr.seq++
		id := pr.prefix + strconv.FormatInt(pr.seq, 10)
		jw, retries, queue := w, cfg.MaxRetries, ""
		if len(e.cfg.Jobs) > 0 || len(e.cfg.FailWindows) > 0 {
			// The job's kind (its id's draw) sets its workload and queue.
			kind, _ := e.cfg.Class(id)
			if kind >= 0 {
				jw = e.cfg.Jobs[kind].Workload()
			}
			retries, queue = e.cfg.MaxRetriesOf(kind, since), e.cfg.QueueOf(kind)
		}
		jr := conditions.JobRand(e.cfg.Seed, id, -1)
		var runAt time.Time
		if jw.Delayed > 0 && jr.Float() < jw.Delayed {
			// The store keeps milliseconds: ask for a whole millisecond, so
			// "started before RunAt" is judged on what the store was told.
			runAt = e.align(intended.Add(jw.Delay.Sample(jr.Float(), jr.Float()))).Truncate(time.Millisecond)
		}
		payload := e.payload[:min(jw.Payload, len(e.payload))]
		pr.jobs[i] = jobstore.NewJob{ID: id, Name: name, Payload: payload, RunAt: runAt, MaxRetries: retries, Queue: queue}
		pr.planned[i] = ledger.PlannedJob{ID: id, Intended: intended, RunAt: runAt, Measured: measured}
		pr.ids[i] = id
	}
	return pr.send(ctx, intended)
}

// send makes the Enqueue call of the batch in pr.jobs, intended at
// intended, and books it in the ledger.
func (pr *producer) send(ctx context.Context, intended time.Time) bool {
	e := pr.e
	callStart := time.Now()
	if k := int(callStart.Sub(e.t0) / time.Second); k >= 0 && k < len(e.sent) {
		e.sent[k].Add(int64(len(pr.ids)))
	}
	if pr.open && !intended.Before(e.warmEnd) {
		pr.rec.Record(hist.TagScheduleLag, callStart.Sub(intended))
	}
	e.led.Planned(pr.planned, callStart)
	// Ctrl-C must not turn an Enqueue in flight into an unknown outcome.
	err := e.store.Enqueue(e.calls.at(callStart), pr.jobs...)
	end := time.Now()
	e.c.enqCalls.Add(1)
	if e.measuring(callStart) {
		pr.rec.Record(hist.TagEnqueue, end.Sub(callStart))
	}
	if err == nil {
		e.led.Acked(pr.ids)
		e.c.enqJobs.Add(int64(len(pr.ids)))
		pr.resend()
		return true
	}
	if rclient.IsOOM(err) {
		e.led.EnqueueRefused(pr.ids)
		e.c.oomEnqueued.Add(int64(len(pr.ids)))
	} else {
		e.led.EnqueueFailed(pr.ids)
	}
	e.c.enqErrors.Add(1)
	e.noteErr(err)
	if errors.Is(err, jobstore.ErrInvalid) {
		return false // every later call would fail the same way
	}
	if !pr.open {
		// A closed loop must not spin on a Redis that is down.
		sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
	return true
}

// resend sends the Enqueue of producers.resend's share of the batch just
// acknowledged a second time (each job's own seeded draw), as a producer
// that lost the reply would. The ledger books nothing: the jobs are the
// same, and a store that runs one twice shows as a duplicate execution.
func (pr *producer) resend() {
	e := pr.e
	share := e.cfg.Producers.Resend
	if share <= 0 {
		return
	}
	var again []jobstore.NewJob
	for _, j := range pr.jobs {
		if r := conditions.JobRand(e.cfg.Seed, j.ID, -2); r.Float() < share {
			again = append(again, j)
		}
	}
	if len(again) == 0 {
		return
	}
	e.c.resent.Add(int64(len(again)))
	err := e.store.Enqueue(e.calls.at(time.Now()), again...)
	switch {
	case errors.Is(err, jobstore.ErrDuplicateID):
		e.c.resendRefused.Add(int64(len(again)))
	case err != nil:
		e.noteErr(err)
	}
}

// align rounds t up to the next multiple of producers.align from the run's
// start (unchanged when align is off or t is on a multiple).
func (e *engine) align(t time.Time) time.Time {
	a := e.cfg.Producers.Align
	if a <= 0 {
		return t
	}
	since := t.Sub(e.t0)
	if r := since % a; r != 0 {
		since += a - r
	}
	return e.t0.Add(since)
}
