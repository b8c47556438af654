package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

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
	timer := clock.NewSleeper(ctx.Done())
	defer timer.Close()
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
				if !timer.For(d) {
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
				runAt = e.align(intended.Add(cfg.Delay.Sample(jr.float(), jr.float()))).Truncate(time.Millisecond)
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
		err := e.store.Enqueue(e.calls.at(callStart), jobs...)
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
