package engine

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
)

// produceTrace is producer p's loop when producers.trace replays a file:
// it takes every count-th arrival (p, p+count, ...), sends each at the
// run's start plus its offset (divided by the speed on simulated time),
// TraceScale copies of it (a seeded draw for the fraction), and with
// TraceLoop starts over after the trace's span until the window ends.
// Latency counts from those times, as from any open-loop plan.
func (e *engine) produceTrace(ctx context.Context, p int) {
	cfg := e.cfg.Producers
	tr := cfg.TraceData
	speed := max(e.hooks.Speed, 1)
	pr := &producer{e: e, rec: e.newRecorder(), rng: rand.New(rand.NewPCG(uint64(e.cfg.Seed), uint64(p)+1)), open: true,
		prefix: "p" + strconv.Itoa(p) + "-", jobs: make([]jobstore.NewJob, 1), planned: make([]ledger.PlannedJob, 1), ids: make([]string, 1)}
	scale := cfg.TraceScale
	if scale <= 0 {
		scale = 1
	}
	span := time.Duration(float64(tr.Span()) / speed)
	timer := clock.NewSleeper(ctx.Done())
	defer timer.Close()
	for loop := time.Duration(0); ; loop++ {
		for i := p; i < len(tr.Arrivals); i += cfg.Count {
			a := tr.Arrivals[i]
			copies := int(scale)
			if pr.rng.Float64() < scale-float64(copies) {
				copies++
			}
			at := e.t0.Add(loop*span + time.Duration(float64(a.Offset)/speed))
			for range copies {
				if _, ok := pr.wait(ctx, timer, at); !ok {
					return
				}
				if !pr.traceCall(ctx, at, a.Delay, a.Payload, a.Kind, speed) {
					return
				}
			}
		}
		if !cfg.TraceLoop {
			return
		}
	}
}

// traceCall enqueues one traced arrival intended at intended.
func (pr *producer) traceCall(ctx context.Context, intended time.Time, delay time.Duration, payload int, kind string, speed float64) bool {
	e := pr.e
	pr.seq++
	id := pr.prefix + strconv.FormatInt(pr.seq, 10)
	var runAt time.Time
	if delay > 0 {
		runAt = intended.Add(time.Duration(float64(delay) / speed)).Truncate(time.Millisecond)
	}
	name := kind
	if name == "" {
		name = "bench"
	}
	pl := e.payload
	if payload < len(pl) {
		pl = pl[:payload]
	}
	pr.jobs[0] = jobstore.NewJob{ID: id, Name: name, Payload: pl, RunAt: runAt, MaxRetries: e.cfg.Producers.MaxRetries}
	pr.planned[0] = ledger.PlannedJob{ID: id, Intended: intended, RunAt: runAt, Measured: !intended.Before(e.warmEnd)}
	pr.ids[0] = id
	return pr.send(ctx, intended)
}
