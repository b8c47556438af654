package faults

import "strings"

// Needs is what a fault kind needs of a run.
type Needs struct {
	// InProcessWorkers: workers in the coordinator (not all processes).
	InProcessWorkers bool
	// Processes: workers.processes >= 1.
	Processes bool
	// OwnedRedis: the redis-server process itself (embedded mode).
	OwnedRedis bool
	// Proxy: the workers' connections go through the in-process proxy.
	Proxy bool
	// Replicas: a spawned cluster's masters and replicas.
	Replicas bool
	// Recoverer, Mover: the run's maintenance loop of that name, on a
	// store of its own behind a crash client.
	Recoverer, Mover bool
	// KillMaster, Partition: the runner's hook that kills the queue's
	// master, or cuts its replication links (engine.FaultSetup).
	KillMaster, Partition bool
	// MaxMemory: a spawned server with redis.maxmemory set.
	MaxMemory bool
}

// Descriptor is everything aebench knows of a fault kind, in one table:
// its fields and their validation (Fault.check reads it), what it needs of
// a run (the scenario's checks and the runner's set-up read it), how it is
// injected (Inject, which the Injector calls) and how its effect shows in
// the ledger (Explain, printed by aebench list --fields).
type Descriptor struct {
	Kind Kind
	Doc  string
	// Points are the crash points it takes, the first the default; nil:
	// it takes none.
	Points []Point
	// Worker: it acts on one worker (field worker picks it).
	Worker bool
	// Steps: it takes steps (commands of the call before the crash).
	Steps bool
	// Replace: the victim stays down replace_after.
	Replace bool
	// Duration: it lasts duration (default DefaultDuration).
	Duration bool
	// Latency: it takes latency and jitter.
	Latency bool
	// Ballast: it takes fill and ballast_ttl.
	Ballast bool
	// SlowsOnly: it slows calls and leaves no job claimed by nobody (a
	// recovery measurement has nothing to take back after it).
	SlowsOnly bool
	// RestartsRedis: Redis comes back as a new process, whose counters
	// (redis.meter instructions) start again.
	RestartsRedis bool
	Needs         Needs
	// Explain is how its effect shows in the ledger and the tables.
	Explain string
	// Inject fires one event of the kind (the Injector calls it at the
	// event's time; it returns when the fault has ended).
	Inject func(in injection, ev Event) error
}

// Fields lists the fields an entry of this kind takes beyond kind, at,
// every, from and until.
func (d Descriptor) Fields() []string {
	var out []string
	if d.Points != nil {
		ps := make([]string, len(d.Points))
		for i, p := range d.Points {
			ps[i] = string(p)
		}
		out = append(out, "point ("+strings.Join(ps, ", ")+"; default "+ps[0]+")")
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{d.Worker, "worker"}, {d.Steps, "steps"}, {d.Replace, "replace_after"}, {d.Duration, "duration"}, {d.Latency, "latency, jitter"}, {d.Ballast, "fill, ballast_ttl"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// Descriptors is the table of every kind a scenario may schedule, in the
// order errors and docs list them. A new kind is its descriptor here with
// its Inject function; what it needs beyond the hooks the Injector has
// (a new kind of target) is a new Hooks field the engine fills.
func Descriptors() []Descriptor {
	return []Descriptor{
		{Kind: WorkerCrash, Inject: injectWorkerCrash, Doc: "stops an in-process worker at a crash point: its leases are dropped unacknowledged; a new worker replaces it",
			Points: []Point{InHandler, AfterClaim, AfterHandler, Random}, Worker: true, Replace: true, Needs: Needs{InProcessWorkers: true},
			Explain: "its jobs in flight come back when their lease expires (recovery p50/p99/max); a job whose handler had started runs twice (duplicated, at-least-once)"},
		{Kind: WorkerKill, Inject: injectWorkerKill, Doc: "SIGKILLs an aebench worker process at a crash point or at random and starts a new one",
			Points: []Point{InHandler, AfterClaim, AfterHandler, AfterComplete, Random}, Worker: true, Replace: true, Needs: Needs{Processes: true},
			Explain: "as worker_crash; an outcome the process never reported is read back from the store (settled by read-back)"},
		{Kind: RecovererCrash, Inject: injectLoopCrash, Doc: "crashes the recoverer between its read and its script step",
			Points: []Point{BetweenSteps}, Steps: true, Replace: true, Needs: Needs{Recoverer: true},
			Explain: "a recovery cut short must leave every job where the next one finds it: a job lost here is the design's"},
		{Kind: MoverCrash, Inject: injectLoopCrash, Doc: "crashes the mover (Promote loop) between its read and its script step",
			Points: []Point{BetweenSteps}, Steps: true, Replace: true, Needs: Needs{Mover: true},
			Explain: "a promotion cut short must leave every job in the delayed set or the ready one: a job in neither is lost"},
		{Kind: RedisRestart, Inject: injectRedis, Doc: "SIGKILLs the embedded redis-server and starts it again on the same port after duration",
			Duration: true, RestartsRedis: true, Needs: Needs{OwnedRedis: true},
			Explain: "without persistence the acknowledged jobs are gone (expect.lost); with AOF always none is"},
		{Kind: RedisPause, Inject: injectRedis, Doc: "stops redis-server with SIGSTOP for duration, then SIGCONT", Duration: true, Needs: Needs{OwnedRedis: true},
			Explain: "calls time out meanwhile; leases may expire and their jobs run again"},
		{Kind: MemoryPressure, Inject: injectBallast, Doc: "fills Redis's memory with ballast keys on a connection of its own, fill x maxmemory bytes (or until refused), holds them for duration, then deletes them",
			Duration: true, Ballast: true, Needs: Needs{OwnedRedis: true, MaxMemory: true},
			Explain: "under an evicting policy jobs vanish (lost, their records or index entries evicted: INFO evicted_keys); under noeviction writes are refused (enqueues fail, completions and recoveries fail and are retried or leave the job stuck)"},
		{Kind: NetLatency, Inject: injectNetwork, Doc: "adds latency +- jitter to the replies to the workers for duration", Duration: true, Latency: true, SlowsOnly: true, Needs: Needs{Proxy: true},
			Explain: "slows calls only: no job should be lost or run twice"},
		{Kind: NetReset, Inject: injectNetwork, Doc: "resets the workers' connections (TCP RST) for duration", Duration: true, Needs: Needs{Proxy: true},
			Explain: "a reply lost with its connection leaves the outcome unknown until read back"},
		{Kind: NetTimeout, Inject: injectNetwork, Doc: "black-holes the workers' connections for duration: nothing passes, calls end at their deadlines",
			Duration: true, Needs: Needs{Proxy: true},
			Explain: "as net_reset, and leases may expire meanwhile"},
		{Kind: MasterKill, Inject: injectReplicated, Doc: "SIGKILLs the cluster master of the queue's slot and leaves it down; with redis.replicas the cluster promotes a replica",
			Needs:   Needs{Replicas: true, KillMaster: true},
			Explain: "the acknowledged jobs the replica never got are lost: asynchronous replication's window"},
		{Kind: NetPartition, Inject: injectReplicated, Doc: "cuts the replication links of the queue's master for duration; clients still reach it",
			Duration: true, Needs: Needs{Replicas: true, Partition: true},
			Explain: "with a master_kill during the cut, what an asynchronous failover loses"},
	}
}

// Describe returns k's descriptor.
func Describe(k Kind) (Descriptor, bool) {
	for _, d := range Descriptors() {
		if d.Kind == k {
			return d, true
		}
	}
	return Descriptor{}, false
}
