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
	h := in.h
	f := ev.Fault
	// Outages end even when the run is stopping: a paused Redis or a
	// black hole left behind would break the drain and the next run.
	bg := context.WithoutCancel(ctx)
	hold := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	switch f.Kind {
	case WorkerCrash:
		if h.CrashWorker == nil {
			return fmt.Errorf("no in-process workers to crash")
		}
		return h.CrashWorker(ev)
	case WorkerKill:
		if h.KillWorker == nil {
			return fmt.Errorf("no worker processes to kill (set workers.processes)")
		}
		return h.KillWorker(ctx, ev)
	case RecovererCrash, MoverCrash:
		if h.CrashLoop == nil {
			return fmt.Errorf("no %s loop runs in this run", map[Kind]string{RecovererCrash: "recoverer", MoverCrash: "mover"}[f.Kind])
		}
		return h.CrashLoop(ev)
	case RedisRestart, RedisPause:
		if h.Redis == nil {
			return fmt.Errorf("%s needs a redis-server that aebench spawned (redis.mode embedded)", f.Kind)
		}
		at := time.Now()
		var err error
		if f.Kind == RedisRestart {
			err = h.Redis.Kill()
		} else {
			err = h.Redis.Pause()
		}
		if err != nil {
			return err
		}
		h.Tracker.Fault(ev, "redis", at, h.InFlight())
		hold(f.Duration)
		if f.Kind == RedisRestart {
			return h.Redis.Restart(bg)
		}
		return h.Redis.Resume()
	case MasterKill, NetPartition:
		return in.fireReplicated(ctx, ev, hold)
	case NetLatency, NetReset, NetTimeout:
		if h.Proxy == nil {
			return fmt.Errorf("%s needs the workers' proxy", f.Kind)
		}
		at := time.Now()
		if err := h.Proxy.Apply(f); err != nil {
			return err
		}
		h.Tracker.Fault(ev, "network", at, h.InFlight())
		hold(f.Duration)
		return h.Proxy.Clear()
	}
	return fmt.Errorf("unknown fault kind %q", f.Kind)
}

// fireReplicated fires a fault on a spawned cluster with replicas: the
// queue's master killed for good, or cut off from its replicas until the
// fault's duration has passed.
func (in *Injector) fireReplicated(ctx context.Context, ev Event, hold func(time.Duration)) error {
	h, f := in.h, ev.Fault
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
