package scenario

// This file holds the checks across fields: what one field's parser
// cannot see alone (a count against another, a fault against the workers
// it acts on, times against the run's length).

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/faults"
)

// crossCheck validates what one field cannot check alone.
func (p *parser) crossCheck(c Config) error {
	at := func(path, msg string) error { return p.errAt(p.nodes[path], path, msg) }
	if c.Redis.Mode == "url" && c.Redis.URL == "" {
		return at("redis.mode", "mode url needs redis.url (redis://[[user]:password@]host:port[/db], or rediss:// for TLS); or use --redis-url")
	}
	if c.Redis.URL != "" && c.Redis.Mode != "url" {
		return at("redis.url", fmt.Sprintf("is set but redis.mode is %q; set redis.mode: url", c.Redis.Mode))
	}
	if c.Network.RTT > 0 && c.Redis.Mode == "cluster" {
		return at("network.rtt", "a cluster's clients reach every master: network.rtt proxies one server only (redis.mode embedded, container or url)")
	}
	if c.Network.RTT > 0 {
		for _, f := range c.Faults {
			if f.NeedsProxy() {
				return at("network.rtt", fmt.Sprintf("not with a network fault (%s) in the same run yet: both need the proxy", f.Kind))
			}
		}
	}
	if c.Store.BackoffMax < c.Store.BackoffBase {
		return at("store.backoff_max", fmt.Sprintf("%s is below store.backoff_base %s", c.Store.BackoffMax, c.Store.BackoffBase))
	}
	if c.Workers.Processes > c.Workers.Count {
		return at("workers.processes", fmt.Sprintf("%d is above workers.count %d: processes are some of the workers", c.Workers.Processes, c.Workers.Count))
	}
	if c.Workers.InProcess() < 0 {
		return at("workers.remote", fmt.Sprintf("%d plus workers.processes %d is above workers.count %d: remote workers are some of the workers", c.Workers.Remote, c.Workers.Processes, c.Workers.Count))
	}
	if hs := c.Workers.RemoteHosts; hs != "" && len(strings.Split(hs, ",")) != c.Workers.Remote {
		return at("workers.remote_hosts", fmt.Sprintf("lists %d addresses for workers.remote %d: one per remote worker", len(strings.Split(hs, ",")), c.Workers.Remote))
	}
	if w := c.Store.WaitReplicas; w > 0 && c.Redis.Mode != "url" && (c.Redis.Mode != "cluster" || w > c.Redis.Replicas) {
		return at("store.wait_replicas", fmt.Sprintf("%d: WAIT needs that many replicas: redis.mode cluster with redis.replicas >= %d (here %s with %d), or a url", w, w, c.Redis.Mode, c.Redis.Replicas))
	}
	if c.Redis.Replicas > 0 && c.Redis.Mode != "cluster" {
		return at("redis.replicas", fmt.Sprintf("applies to a cluster aebench spawns (redis.mode cluster), not %q", c.Redis.Mode))
	}
	if c.Redis.HZ != 10 && c.Redis.Mode != "embedded" && c.Redis.Mode != "cluster" {
		return at("redis.hz", fmt.Sprintf("applies to a server aebench spawns (redis.mode embedded or cluster), not %q", c.Redis.Mode))
	}
	if c.Redis.CPUs != "" && c.Redis.Mode != "embedded" && c.Redis.Mode != "cluster" {
		return at("redis.cpus", fmt.Sprintf("applies to a server aebench spawns (redis.mode embedded or cluster), not %q", c.Redis.Mode))
	}
	if c.Redis.Metered() && c.Redis.Mode != "embedded" {
		return at("redis.meter", fmt.Sprintf("instructions needs a server aebench spawns alone (redis.mode embedded), not %q", c.Redis.Mode))
	}
	for _, f := range c.Faults {
		if c.Redis.Metered() && f.Descriptor().RestartsRedis {
			return at("redis.meter", fmt.Sprintf("instructions cannot meter across a %s fault (the restarted server is a new process with new counters); allowed: time", f.Kind))
		}
	}
	if (c.Redis.MaxMemory > 0 || c.Redis.MaxMemoryPolicy != "") && c.Redis.Mode != "embedded" && c.Redis.Mode != "cluster" {
		field := "redis.maxmemory"
		if c.Redis.MaxMemory == 0 {
			field = "redis.maxmemory_policy"
		}
		return at(field, fmt.Sprintf("applies to a server aebench spawns (redis.mode embedded or cluster), not %q: aebench doctor reads a given server's", c.Redis.Mode))
	}
	if c.Redis.Save != "" && !strings.HasPrefix(c.Redis.Persistence, "rdb") {
		return at("redis.save", fmt.Sprintf("applies to redis.persistence rdb or rdb+aof-everysec, not %q", c.Redis.Persistence))
	}
	if c.Redis.Persistence != "none" && c.Redis.Mode != "embedded" {
		return at("redis.persistence", fmt.Sprintf("applies to a server aebench spawns alone (redis.mode embedded), not %q", c.Redis.Mode))
	}
	for i, f := range c.Faults {
		if err := p.checkFault(c, i, f); err != nil {
			return err
		}
	}
	if err := p.checkDrain(c); err != nil {
		return err
	}
	if err := p.checkDropped(c, at); err != nil {
		return err
	}
	if c.Workers.Heartbeat && c.Workers.HeartbeatInterval >= c.Workers.Lease {
		return at("workers.heartbeat_interval", fmt.Sprintf("%s is not below workers.lease %s: the lease would lapse", c.Workers.HeartbeatInterval, c.Workers.Lease))
	}
	return checkTime(c, at)
}

// checkDropped refuses a field the file gives whose value another field
// makes meaningless, naming both, where the run would otherwise drop it
// without a word; one that does no harm is a warning the run prints and
// summary.json keeps (Scenario.Warnings).
func (p *parser) checkDropped(c Config, at func(path, msg string) error) error {
	given := func(path string) bool { return p.nodes[path] != nil }
	switch {
	case given("producers.rate") && c.Producers.Mode != "open":
		return at("producers.rate", fmt.Sprintf("has no effect with producers.mode %s: a closed loop enqueues as fast as producers.max_backlog lets it; remove producers.rate or set producers.mode open", c.Producers.Mode))
	case given("producers.delay") && c.Producers.Delayed == 0:
		return at("producers.delay", "is set but producers.delayed is 0: no job is delayed; set producers.delayed (the share of jobs delayed) or remove producers.delay")
	case given("redis.masters") && c.Redis.Mode != "cluster":
		return at("redis.masters", fmt.Sprintf("applies to a cluster aebench spawns (redis.mode cluster), not %q", c.Redis.Mode))
	case c.Workers.AckBatch > 1 && c.Workers.AckInterval >= c.Workers.Lease:
		return at("workers.ack_interval", fmt.Sprintf("%s is not below workers.lease %s: an ack waiting for its batch would find its lease expired", c.Workers.AckInterval, c.Workers.Lease))
	}
	// A matrix over ack_batch uses the interval in its batched cells.
	swept := p.nodes["workers.ack_batch"] != nil && p.nodes["workers.ack_batch"].Kind == yaml.SequenceNode
	if given("workers.ack_interval") && c.Workers.AckBatch <= 1 && !swept {
		w := fmt.Sprintf("%s: workers.ack_interval has no effect with workers.ack_batch %d (each job is acknowledged alone)", p.file, c.Workers.AckBatch)
		if !slices.Contains(p.warnings, w) {
			p.warnings = append(p.warnings, w)
		}
	}
	return nil
}

// checkFault checks the i-th fault f against what its kind needs of the
// run (its descriptor) and the run's times.
func (p *parser) checkFault(c Config, i int, f faults.Fault) error {
	fat := func(msg string) error {
		return &ConfigError{File: p.file, Line: f.Line, Column: f.Column, Field: fmt.Sprintf("faults[%d]", i), Msg: msg}
	}
	switch {
	case f.Descriptor().Needs.InProcessWorkers && c.Workers.InProcess() <= 0:
		return fat("worker_crash crashes in-process workers, and every worker is a process (workers.processes, workers.remote); use worker_kill")
	case f.Descriptor().Needs.Processes && c.Workers.Processes == 0:
		return fat("worker_kill kills worker processes; set workers.processes >= 1")
	case f.IsWorkerKind() && f.Worker >= 0 && f.Descriptor().Needs.Processes && f.Worker >= c.Workers.Processes:
		return fat(fmt.Sprintf("worker %d: there are %d worker processes", f.Worker, c.Workers.Processes))
	case f.IsWorkerKind() && f.Worker >= 0 && f.Descriptor().Needs.InProcessWorkers && f.Worker >= c.Workers.InProcess():
		return fat(fmt.Sprintf("worker %d: there are %d in-process workers", f.Worker, c.Workers.InProcess()))
	case f.NeedsReplicas() && (c.Redis.Mode != "cluster" || c.Redis.Replicas < 1 || c.Redis.Masters < 3):
		return fat(fmt.Sprintf("%s needs a cluster aebench spawns with replicas and at least 3 masters (a failover needs a majority of masters to see the failure): redis.mode cluster, redis.replicas >= 1, redis.masters >= 3; here %s, %d replicas, %d masters",
			f.Kind, c.Redis.Mode, c.Redis.Replicas, c.Redis.Masters))
	case f.Descriptor().Needs.MaxMemory && c.Redis.MaxMemory <= 0:
		return fat(fmt.Sprintf("%s fills memory up to a share of maxmemory: set redis.maxmemory (64MiB, say) and redis.maxmemory_policy", f.Kind))
	case (f.NeedsOwnedRedis() || f.NeedsProxy()) && c.Redis.Mode != "embedded":
		return fat(fmt.Sprintf("%s needs redis.mode embedded (a loopback redis-server aebench spawned), not %q", f.Kind, c.Redis.Mode))
	}
	return p.checkFaultTimes(c, i, f)
}

// checkTime refuses a speed without simulated time, and what simulated
// time cannot drive: worker processes (their stores would need the
// coordinator's simulated clock).
func checkTime(c Config, at func(field, msg string) error) error {
	switch {
	case !c.Simulated() && c.Time.Speed != 1:
		return at("time.speed", fmt.Sprintf("%g needs time.base simulated (on real time the speed is 1)", c.Time.Speed))
	case c.Simulated() && c.Workers.Processes > 0:
		return at("workers.processes", "worker processes cannot run on simulated time (time.base simulated): use in-process workers")
	case c.Simulated() && c.Workers.Remote > 0:
		return at("workers.remote", "remote workers cannot run on simulated time (time.base simulated): use in-process workers")
	}
	return nil
}

// checkFaultTimes refuses a fault timed after the run's end (warmup +
// duration): it would never fire, and the run would pass without it.
func (p *parser) checkFaultTimes(c Config, i int, f faults.Fault) error {
	end := c.Warmup + c.Duration
	fat := func(field string, d time.Duration, what string) error {
		return &ConfigError{File: p.file, Line: f.Line, Column: f.Column, Field: fmt.Sprintf("faults[%d].%s", i, field),
			Msg: fmt.Sprintf("%s %s is not before the run's end %s (warmup %s + duration %s): the fault would never fire", what, d, end, c.Warmup, c.Duration)}
	}
	for j, at := range f.At {
		if at >= end && len(f.AtPhase) > j && f.AtPhase[j] != "" {
			return &ConfigError{File: p.file, Line: f.Line, Column: f.Column, Field: fmt.Sprintf("faults[%d].at", i),
				Msg: fmt.Sprintf("%s is %s from the run's start, after the last phase ends at %s: the fault would never fire", f.AtPhase[j], at, end)}
		}
		if at >= end {
			return fat("at", at, "at")
		}
	}
	if f.Every > 0 && f.From >= end {
		return fat("from", f.From, "from")
	}
	if f.Until > end {
		return fat("until", f.Until, "until")
	}
	return nil
}

// checkDrain refuses a drain shorter than the longest handler: jobs still
// running when it ends would be cut off (counted unfinished at drain, not
// lost, but the run would not have finished its work). For an unbounded
// handler distribution the bound is its 99.9th percentile and the result a
// warning.
func (p *parser) checkDrain(c Config) error {
	h := c.Workers.Handler
	bound, exact := h.Bound()
	if c.Drain >= bound {
		return nil
	}
	msg := fmt.Sprintf("%s is shorter than the handler's %s (workers.handler %s): jobs still running when the drain ends are cut off", c.Drain, "longest run "+bound.String(), h)
	if !exact {
		msg = fmt.Sprintf("%s is shorter than the handler's 99.9th percentile %s (workers.handler %s): some jobs may still be running when the drain ends (counted unfinished at drain)", c.Drain, bound, h)
		w := fmt.Sprintf("%s: drain %s", p.file, msg)
		if !slices.Contains(p.warnings, w) {
			p.warnings = append(p.warnings, w)
		}
		return nil
	}
	n := p.nodes["drain"]
	if n == nil {
		n = p.nodes["workers.handler"]
	}
	return p.errAt(n, "drain", msg+"; allowed: a drain >= "+bound.String())
}

// sizeMaxMemory resolves redis.maxmemory given as a multiple of the
// working set into bytes, for the cell's conditions.
func (p *parser) sizeMaxMemory(c *Config) error {
	if c.Redis.MaxMemoryTimes <= 0 {
		return nil
	}
	ws, ok := c.WorkingSet()
	if !ok {
		return p.errAt(p.nodes["redis.maxmemory"], "redis.maxmemory",
			fmt.Sprintf("%gx needs the working set, which aebench estimates from an open-loop producers.rate without phases, a trace or a capacity probe; give a size (64MiB) instead", c.Redis.MaxMemoryTimes))
	}
	c.Redis.MaxMemory = max(int64(c.Redis.MaxMemoryTimes*float64(ws)), 2<<20)
	return nil
}
