package faults

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// RedisNode is the redis-server process a Redis fault acts on
// (redisserver.Node satisfies it).
type RedisNode interface {
	Kill() error
	Restart(ctx context.Context) error
	Pause() error
	Resume() error
}

// Hooks are what the harness gives the Injector. A nil hook makes faults of
// its kind land as skipped, with the reason.
type Hooks struct {
	// CrashWorker arms an in-process worker crash at ev.Point on worker
	// ev.Worker (or a seeded choice); the harness reports the landing to the
	// Tracker itself, when a worker reaches the point.
	CrashWorker func(ev Event) error
	// KillWorker SIGKILLs a worker process at ev.Point (Random: at once) and
	// restarts it after ReplaceAfter; it reports to the Tracker itself.
	KillWorker func(ctx context.Context, ev Event) error
	// CrashLoop arms a recoverer or mover crash between steps.
	CrashLoop func(ev Event) error
	// Redis is the embedded server, for Redis faults.
	Redis RedisNode
	// KillMaster kills the cluster master of the queue and names it.
	KillMaster func(ctx context.Context) (string, error)
	// Partition cuts the replication links of the queue's master, names
	// it and returns what heals the cut.
	Partition func(ctx context.Context) (string, func() error, error)
	// Proxy carries the workers' connections, for network faults.
	Proxy *Proxy
	// Ballast writes fill x maxmemory bytes of ballast keys (ttl 0: none)
	// on a connection of its own and returns what deletes them, and how
	// many bytes Redis took (it stops at the first refusal).
	Ballast func(ctx context.Context, fill float64, ttl time.Duration) (release func() error, written int64, err error)
	// InFlight lists every job in flight (for Redis and network faults).
	InFlight func() []Affected
	Tracker  *Tracker
	Logf     func(format string, args ...any)
	// Fired, when set, is told of each event as it fires (live metrics).
	Fired func(ev Event)
}

// Injector fires a run's planned events at their times.
type Injector struct {
	h  Hooks
	wg sync.WaitGroup
}

// NewInjector returns an injector with the harness's hooks.
func NewInjector(h Hooks) *Injector {
	if h.Logf == nil {
		h.Logf = func(string, ...any) {}
	}
	return &Injector{h: h}
}

// Run fires events at t0+ev.At until ctx ends; each fault runs in its own
// goroutine, so a long outage does not delay the next fault. It returns at
// once; Wait waits for every fault to end (Redis resumed, toxics removed).
func (in *Injector) Run(ctx context.Context, t0 time.Time, events []Event) {
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for i, ev := range events {
			timer.Reset(time.Until(t0.Add(ev.At)))
			select {
			case <-ctx.Done():
				for _, rest := range events[i:] {
					in.h.Tracker.Skipped(rest, t0.Add(rest.At), "the run ended first")
				}
				return
			case <-timer.C:
			}
			if in.h.Fired != nil {
				in.h.Fired(ev)
			}
			in.wg.Add(1)
			go func() {
				defer in.wg.Done()
				if err := in.fire(ctx, ev); err != nil {
					in.h.Tracker.Skipped(ev, time.Now(), err.Error())
					in.h.Logf("fault %d (%s): %v", ev.Index, ev.Fault, err)
				}
			}()
		}
	}()
}

// Wait waits until every fault fired so far has ended.
func (in *Injector) Wait() { in.wg.Wait() }

func (in *Injector) fire(ctx context.Context, ev Event) error {
	d, ok := Describe(ev.Fault.Kind)
	if !ok || d.Inject == nil {
		return fmt.Errorf("unknown fault kind %q", ev.Fault.Kind)
	}
	// Outages end even when the run is stopping: a paused Redis or a
	// black hole left behind would break the drain and the next run.
	hold := func(dur time.Duration) {
		t := time.NewTimer(dur)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return d.Inject(injection{Hooks: in.h, ctx: ctx, bg: context.WithoutCancel(ctx), hold: hold}, ev)
}

// injection is what an Inject function of a Descriptor works with: the
// run's hooks, the run's context, a context that outlives it (to end an
// outage whatever happens) and hold, which waits out a fault's duration
// (or the run's end).
type injection struct {
	Hooks
	ctx, bg context.Context
	hold    func(time.Duration)
}

func injectWorkerCrash(in injection, ev Event) error {
	if in.CrashWorker == nil {
		return fmt.Errorf("no in-process workers to crash")
	}
	return in.CrashWorker(ev)
}

func injectWorkerKill(in injection, ev Event) error {
	if in.KillWorker == nil {
		return fmt.Errorf("no worker processes to kill (set workers.processes)")
	}
	return in.KillWorker(in.ctx, ev)
}

func injectLoopCrash(in injection, ev Event) error {
	if in.CrashLoop == nil {
		return fmt.Errorf("no %s loop runs in this run", map[Kind]string{RecovererCrash: "recoverer", MoverCrash: "mover"}[ev.Fault.Kind])
	}
	return in.CrashLoop(ev)
}

// injectRedis kills (redis_restart) or pauses (redis_pause) the spawned
// redis-server for the fault's duration.
func injectRedis(in injection, ev Event) error {
	f := ev.Fault
	if in.Redis == nil {
		return fmt.Errorf("%s needs a redis-server that aebench spawned (redis.mode embedded)", f.Kind)
	}
	at := time.Now()
	var err error
	if f.Kind == RedisRestart {
		err = in.Redis.Kill()
	} else {
		err = in.Redis.Pause()
	}
	if err != nil {
		return err
	}
	in.Tracker.Fault(ev, "redis", at, in.InFlight())
	in.hold(f.Duration)
	if f.Kind == RedisRestart {
		return in.Redis.Restart(in.bg)
	}
	return in.Redis.Resume()
}

// injectBallast fills memory with ballast for the fault's duration.
func injectBallast(in injection, ev Event) error {
	f := ev.Fault
	if in.Ballast == nil {
		return fmt.Errorf("%s needs a redis-server that aebench spawned with redis.maxmemory", f.Kind)
	}
	at := time.Now()
	inFlight := in.InFlight()
	release, written, err := in.Ballast(in.ctx, f.Fill, f.BallastTTL)
	if err != nil {
		return err
	}
	in.Logf("memory_pressure: %d bytes of ballast written (fill %g)", written, f.Fill)
	in.Tracker.Fault(ev, "redis", at, inFlight)
	in.hold(f.Duration)
	return release()
}

// injectNetwork puts the fault's toxic on the workers' proxy for its duration.
func injectNetwork(in injection, ev Event) error {
	f := ev.Fault
	if in.Proxy == nil {
		return fmt.Errorf("%s needs the workers' proxy", f.Kind)
	}
	at := time.Now()
	if err := in.Proxy.Apply(f); err != nil {
		return err
	}
	in.Tracker.Fault(ev, "network", at, in.InFlight())
	in.hold(f.Duration)
	return in.Proxy.Clear()
}

// injectReplicated fires a fault on a spawned cluster with replicas: the
// queue's master killed for good, or cut off from its replicas until the
// fault's duration has passed.
func injectReplicated(in injection, ev Event) error {
	h, f, ctx, hold := in.Hooks, ev.Fault, in.ctx, in.hold
	if f.Kind == MasterKill && h.KillMaster == nil || f.Kind == NetPartition && h.Partition == nil {
		return fmt.Errorf("%s needs a cluster aebench spawned with replicas (redis.mode cluster, redis.replicas)", f.Kind)
	}
	at := time.Now()
	inFlight := h.InFlight()
	if f.Kind == MasterKill {
		target, err := h.KillMaster(ctx)
		if err != nil {
			return err
		}
		h.Tracker.Fault(ev, "master "+target, at, inFlight)
		return nil
	}
	target, heal, err := h.Partition(ctx)
	if err != nil {
		return err
	}
	h.Tracker.Fault(ev, "partition "+target, at, inFlight)
	hold(f.Duration)
	return heal()
}
