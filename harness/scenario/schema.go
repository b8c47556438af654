package scenario

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/jobstore"
)

// field is one scalar setting of a scenario file. The table below is the
// single source of the parser, the defaults, the error messages and
// `aebench list --fields`; scenarios/README.md documents the same fields and
// a test keeps the two in step.
type field struct {
	Path    string // "producers.rate"
	Default string // "" means no default (the field is required or optional-empty)
	Allowed string // for error messages and docs
	Doc     string
	// Matrix: a list of values expands into one cell per value.
	Matrix bool
	// set parses one value into c; its error says what is wrong, not where.
	set func(c *Config, v string) error
}

// The top-level keys that hold a mapping of fields.
var sections = []string{"time", "redis", "network", "store", "producers", "workers", "expect", "slo", "drift"}

func fields() []field {
	var out []field
	for _, g := range [](func() []field){runFields, redisFields, redisServerFields, storeFields, producerFields, workerFields, workerPlaceFields} {
		out = append(out, g()...)
	}
	return out
}

// runFields are the fields of the run: seed, times, client and record encoding.
func runFields() []field {
	return []field{
		{Path: "seed", Default: "1", Allowed: "an integer", Matrix: true,
			Doc: "seeds arrivals, delays, handler times and failures; runs with equal seeds see the same jobs",
			set: func(c *Config, v string) error { n, err := parseInt64(v); c.Seed = n; return err }},
		{Path: "duration", Default: "10s", Allowed: "a duration > 0, at most 24h", Matrix: true,
			Doc: "measured time per run, after the warm-up",
			set: func(c *Config, v string) error { return setDur(&c.Duration, v, time.Millisecond, 24*time.Hour) }},
		{Path: "warmup", Default: "2s", Allowed: "a duration >= 0, at most 1h", Matrix: true,
			Doc: "load before measuring; its jobs run and are checked but not measured",
			set: func(c *Config, v string) error { return setDur(&c.Warmup, v, 0, time.Hour) }},
		{Path: "drain", Default: "30s", Allowed: "a duration > 0, at most 24h", Matrix: true,
			Doc: "after the producers stop, how long workers may take to finish every acknowledged job; what is left is lost",
			set: func(c *Config, v string) error { return setDur(&c.Drain, v, time.Millisecond, 24*time.Hour) }},
		{Path: "time.base", Default: conditions.TimeReal, Allowed: "real, simulated", Matrix: true,
			Doc: "real: the wall clock; simulated: every duration and rate of the file is simulated time running time.speed times as fast (the stores decide on a scaled clock, latencies are reported in simulated time; see Simulated time in scenarios/README.md)",
			set: func(c *Config, v string) error {
				return setEnum(&c.Time.Base, v, conditions.TimeReal, conditions.TimeSimulated)
			}},
		{Path: "time.speed", Default: "1", Allowed: "a number 1..10000 (simulated seconds per real second)", Matrix: true,
			Doc: "with time.base simulated: 60 runs one simulated minute a real second; one real millisecond (Redis's round trip is a fraction of it) then counts as 60 simulated ms, the run's resolution",
			set: func(c *Config, v string) error { return setFloat(&c.Time.Speed, v, 1, 10000) }},
		{Path: "client", Default: "go-redis", Allowed: "go-redis, rueidis", Matrix: true,
			Doc: "Redis client library the backends use",
			set: func(c *Config, v string) error { return setEnum(&c.Client, v, "go-redis", "rueidis") }},
		{Path: "encoding", Default: "hash", Allowed: "hash, json", Matrix: true,
			Doc: "job record layout: a Redis hash (seed 001) or one JSON string",
			set: func(c *Config, v string) error { return setEnum(&c.Encoding, v, "hash", "json") }},
	}
}

// redisFields are the fields of where Redis comes from.
func redisFields() []field {
	return []field{
		{Path: "network.rtt", Default: "0", Allowed: "a duration >= 0 in whole milliseconds, at most 1s", Matrix: true,
			Doc: "round-trip time between the run's clients (producers, workers, recoverer, mover; not the cost meter) and Redis: each connection goes through an in-process proxy that delays each direction by half of it; 0: direct. Not with redis.mode cluster or network faults",
			set: func(c *Config, v string) error {
				if err := setDur(&c.Network.RTT, v, 0, time.Second); err != nil {
					return err
				}
				if c.Network.RTT%time.Millisecond != 0 {
					return fmt.Errorf("%s is not a whole number of milliseconds (the proxy delays in ms)", c.Network.RTT)
				}
				return nil
			}},
		{Path: "redis.mode", Default: "embedded", Allowed: "embedded, cluster, container, url", Matrix: true,
			Doc: "embedded: a private redis-server on a free port; cluster: 3 spawned masters; container: testcontainers; url: redis.url (never flushed)",
			set: func(c *Config, v string) error {
				return setEnum(&c.Redis.Mode, v, "embedded", "cluster", "container", "url")
			}},
		{Path: "redis.url", Default: "", Allowed: "redis://[[user]:password@]host:port[/db], or rediss:// (TLS) with ?ca_file=&cert_file=&key_file=&skip_verify=&server_name=", Matrix: true,
			Doc: "the server for mode url; user is an ACL user (the default user when empty)",
			set: func(c *Config, v string) error {
				if v != "" && !strings.HasPrefix(v, "redis://") && !strings.HasPrefix(v, "rediss://") {
					return fmt.Errorf("%q does not start with redis:// or rediss://", v)
				}
				c.Redis.URL = v
				return nil
			}},
		{Path: "redis.masters", Default: "3", Allowed: "an integer >= 1", Matrix: true,
			Doc: "masters of a spawned cluster (mode cluster)",
			set: func(c *Config, v string) error { return setInt(&c.Redis.Masters, v, 1, 16) }},

		{Path: "redis.replicas", Default: "0", Allowed: "an integer 0..2", Matrix: true,
			Doc: "replicas of each master of a spawned cluster (mode cluster; asynchronous replication, cluster-node-timeout 2s, so a dead master's replica takes over in a few seconds when 3 or more masters see it fail). Redis cost per job counts the masters only",
			set: func(c *Config, v string) error { return setInt(&c.Redis.Replicas, v, 0, 2) }},

		{Path: "redis.persistence", Default: "none", Allowed: "none, rdb, rdb+aof-everysec, aof-everysec, aof-always", Matrix: true,
			Doc: "persistence of a spawned server (embedded): none; rdb, a stock redis.conf's snapshots (save 3600 1 300 100 60 10000); AOF with appendfsync everysec or always; or both; what a redis_restart fault keeps (its promise is printed with the run)",
			set: func(c *Config, v string) error {
				return setEnum(&c.Redis.Persistence, v, "none", "rdb", "rdb+aof-everysec", "aof-everysec", "aof-always")
			}},
	}
}

// redisServerFields are the fields of a spawned server's memory and
// snapshots.
func redisServerFields() []field {
	return []field{
		{Path: "redis.save", Default: "", Allowed: "pairs of seconds and changes (\"5 1000\": a snapshot 5s after 1000 changes)", Matrix: true,
			Doc: "RDB save points of redis.persistence rdb and rdb+aof-everysec (empty: a stock redis.conf's, " + conditions.StockSavePoints + ")",
			set: func(c *Config, v string) error {
				f := strings.Fields(v)
				if v == "" {
					c.Redis.Save = ""
					return nil
				}
				if len(f) == 0 || len(f)%2 != 0 {
					return fmt.Errorf("%q is not pairs of seconds and changes", v)
				}
				for _, x := range f {
					if n, err := strconv.Atoi(x); err != nil || n < 1 {
						return fmt.Errorf("%q in %q is not a positive integer", x, v)
					}
				}
				c.Redis.Save = strings.Join(f, " ")
				return nil
			}},
		{Path: "redis.maxmemory", Default: "0", Allowed: "a size (64MiB, 1GiB; 0: no limit), or a multiple of the expected working set (1.5x)", Matrix: true,
			Doc: "maxmemory of a spawned server (embedded, cluster: each master): what a memory_pressure fault fills, and where redis.maxmemory_policy acts. 1.5x: 1.5 times the plan's expected working set (the jobs finished within store.retention and those waiting for their delay, each its payload + 1200 B, above 1 MiB; an open-loop producers.rate without phases or a trace), resolved per cell and printed in the conditions",
			set: func(c *Config, v string) error {
				c.Redis.MaxMemoryTimes = 0
				if x, ok := strings.CutSuffix(v, "x"); ok {
					f, err := strconv.ParseFloat(x, 64)
					if err != nil || f <= 0 || f > 100 {
						return fmt.Errorf("%q is not a multiple from 0 to 100 of the working set", v)
					}
					c.Redis.MaxMemory, c.Redis.MaxMemoryTimes = 0, f
					return nil
				}
				n, err := conditions.ParseSize(v)
				if err != nil {
					return err
				}
				if n != 0 && n < 1<<20 {
					return fmt.Errorf("%s is under 1MiB: Redis needs more to run at all", v)
				}
				c.Redis.MaxMemory = int64(n)
				return nil
			}},
		{Path: "redis.maxmemory_policy", Default: "", Allowed: strings.Join(conditions.MaxMemoryPolicies(), ", "), Matrix: true,
			Doc: "maxmemory-policy of a spawned server (default: the server's, noeviction): what Redis does at maxmemory, evict keys (job records and queue keys among them: jobs vanish without an error) or refuse writes (OOM errors)",
			set: func(c *Config, v string) error {
				if v == "" {
					c.Redis.MaxMemoryPolicy = ""
					return nil
				}
				return setEnum(&c.Redis.MaxMemoryPolicy, v, conditions.MaxMemoryPolicies()...)
			}},
		{Path: "redis.meter", Default: "time", Allowed: "time, instructions",
			Doc: "time: Redis cost per job from INFO (CPU time, commands, bytes); instructions: also the instructions Redis executes per job, counted by valgrind's callgrind around the measured window (embedded only; deterministic enough to gate on a shared runner, but Redis runs about 50x slower, so the run's timings are marked distorted and never compared with unmetered ones)",
			set: func(c *Config, v string) error { return setEnum(&c.Redis.Meter, v, "time", "instructions") }},

		{Path: "redis.cpus", Default: "", Allowed: "a CPU list (1, 2-3, 0,2) of CPUs this machine has",
			Doc: "pins a spawned server's main thread to these CPUs (redis-server --server_cpulist; embedded, cluster), and the harness (with the worker processes and drivers it starts) to the CPUs it may use less these: Redis has its cores to itself, and a store-bound figure is the store's, not what the harness left it of shared cores. Shown in the conditions and the plan's cpus line (summary environment.harness_cpus)",
			set: func(c *Config, v string) error { return setCPUList(&c.Redis.CPUs, v) }},
		{Path: "redis.hz", Default: "10", Allowed: "an integer from 1 to 500", Matrix: true,
			Doc: "hz of a spawned server (embedded, cluster); Redis's default is 10. Redis times out blocked commands on this tick, so a claim blocked until a delayed job's RunAt wakes up to 1/hz late: compare lateness at 10 and 100",
			set: func(c *Config, v string) error { return setInt(&c.Redis.HZ, v, 1, 500) }},
	}
}

// storeFields are the fields of the store options every backend gets.
func storeFields() []field {
	return []field{
		{Path: "store.poll_interval", Default: "100ms", Allowed: "a duration > 0, at most 1m", Matrix: true,
			Doc: "jobstore.Options.PollInterval: how often a waiting Claim polls on backends that cannot block",
			set: func(c *Config, v string) error {
				return setDur(&c.Store.PollInterval, v, time.Millisecond, time.Minute)
			}},
		{Path: "store.backoff_base", Default: "100ms", Allowed: "a duration > 0, at most 1h", Matrix: true,
			Doc: "retry delay after the first failure; doubles per retry",
			set: func(c *Config, v string) error { return setDur(&c.Store.BackoffBase, v, time.Millisecond, time.Hour) }},
		{Path: "store.backoff_max", Default: "5s", Allowed: "a duration >= backoff_base, at most 1h", Matrix: true,
			Doc: "cap on the retry delay",
			set: func(c *Config, v string) error { return setDur(&c.Store.BackoffMax, v, time.Millisecond, time.Hour) }},
		{Path: "store.backoff_jitter", Default: "0", Allowed: "0 <= x < 1", Matrix: true,
			Doc: "retry delay is multiplied by a factor in [1-x, 1+x]",
			set: func(c *Config, v string) error { return setFloat(&c.Store.BackoffJitter, v, 0, 0.999999) }},
		{Path: "store.retention", Default: "10m", Allowed: "a duration >= 1ms, at most 720h", Matrix: true,
			Doc: "how long finished job records stay in Redis (they count in memory per job)",
			set: func(c *Config, v string) error { return setDur(&c.Store.Retention, v, time.Millisecond, 720*time.Hour) }},

		{Path: "store.shards", Default: "1", Allowed: "an integer 1..64", Matrix: true,
			Doc: "shards of the queue: the backend as that many complete stores, each on its own hash tag (so on a cluster they spread over the masters), enqueue routed by job id, claims taken from every shard; ordering holds per shard only (package backends/shard). Job stores and the floor only",
			set: func(c *Config, v string) error { return setInt(&c.Store.Shards, v, 1, 64) }},

		{Path: "store.queues", Default: "none", Allowed: "two or more queue names in priority order, each with an optional weight (\"critical:6 default:3 low:1\")",
			Doc: "split the store into queues claimed under store.queue_policy (package backends/queues); jobs: kinds name their queue. Job stores and the floor split; asynq and the drivers use their own queues or priorities (store.queue_policy as each declares)",
			set: func(c *Config, v string) error {
				if strings.TrimSpace(v) == "" || v == "none" {
					c.Store.Queues = nil
					return nil
				}
				q, err := conditions.ParseQueues(v)
				c.Store.Queues = q
				return err
			}},
		{Path: "store.queue_policy", Default: "strict", Allowed: "strict, weighted, round_robin", Matrix: true,
			Doc: "how a Claim visits store.queues: strict drains the first before the next; weighted draws the order by weight (asynq, Sidekiq); round_robin rotates",
			set: func(c *Config, v string) error {
				return setEnum(&c.Store.QueuePolicy, v, "strict", "weighted", "round_robin")
			}},
		{Path: "store.wait_replicas", Default: "0", Allowed: "an integer 0..2, at most redis.replicas", Matrix: true,
			Doc: "WAIT for this many replicas after each enqueue, on the enqueue's connection (jobstore.Options.WaitReplicas): what a failover loses with and without it (redis.mode cluster with redis.replicas, or url)",
			set: func(c *Config, v string) error { return setInt(&c.Store.WaitReplicas, v, 0, 2) }},
		{Path: "store.wait_timeout", Default: "1s", Allowed: "a duration from 1ms to 1m", Matrix: true,
			Doc: "WAIT's timeout: an enqueue returns after it even when fewer replicas have the jobs",
			set: func(c *Config, v string) error { return setDur(&c.Store.WaitTimeout, v, time.Millisecond, time.Minute) }},
	}
}

// producerFields are the fields of the load.
func producerFields() []field {
	return []field{
		{Path: "producers.count", Default: "2", Allowed: "an integer 1..1024", Matrix: true,
			Doc: "producer goroutines; the rate is shared among them",
			set: func(c *Config, v string) error { return setInt(&c.Producers.Count, v, 1, 1024) }},
		{Path: "producers.mode", Default: "open", Allowed: "open, closed, depth", Matrix: true,
			Doc: "open: enqueue on a planned schedule at producers.rate, latency counted from the plan; closed: flat out, paused while the backlog exceeds producers.max_backlog; depth: keep the due backlog (acknowledged, due, not running) at producers.depth, the diagnostic of the Postgres job-queue harness: the throughput is what that depth sustains",
			set: func(c *Config, v string) error { return setEnum(&c.Producers.Mode, v, "open", "closed", "depth") }},
		{Path: "producers.rate", Default: "1000", Allowed: "a number > 0 (jobs/s)", Matrix: true,
			Doc: "jobs per second, all producers together (open loop)",
			set: func(c *Config, v string) error { return setFloat(&c.Producers.Rate, v, 1e-9, 1e7) }},
		{Path: "producers.capacity", Default: "0", Allowed: "a number >= 0 (jobs/s; 0: unknown), measure, or measure(DURATION) (default 5s)", Matrix: true,
			Doc: "the store's capacity under these conditions: a number you measured, or measure: a closed-loop probe of the same backend and settings runs before each cell's first run of that backend (its result and conditions recorded as capacity_source). Phases may then give rates as multiples of it (rate: 1.5x), and an overload followed by a recovery gets the fluid model's backlog and catch-up beside the measured ones",
			set: setCapacity},
		{Path: "producers.arrivals", Default: "poisson", Allowed: "poisson, constant", Matrix: true,
			Doc: "open-loop inter-arrival times: exponential (Poisson process) or fixed",
			set: func(c *Config, v string) error { return setEnum(&c.Producers.Arrivals, v, "poisson", "constant") }},
		{Path: "producers.batch", Default: "1", Allowed: "an integer 1..1000", Matrix: true,
			Doc: "jobs per Enqueue call",
			set: func(c *Config, v string) error { return setInt(&c.Producers.Batch, v, 1, 1000) }},
		{Path: "producers.payload", Default: "256", Allowed: "a size 0..1MiB (256, 4KiB)", Matrix: true,
			Doc: "payload bytes per job",
			set: func(c *Config, v string) error {
				n, err := conditions.ParseSize(v)
				if err != nil || n < 0 || n > 1<<20 {
					return fmt.Errorf("%q is not a size between 0 and 1MiB", v)
				}
				c.Producers.Payload = n
				return nil
			}},
		{Path: "producers.delayed", Default: "0", Allowed: "a share 0..1", Matrix: true,
			Doc: "share of jobs enqueued with a RunAt in the future",
			set: func(c *Config, v string) error { return setFloat(&c.Producers.Delayed, v, 0, 1) }},
		{Path: "producers.delay", Default: "1s", Allowed: conditions.DistAllowed, Matrix: true,
			Doc: "delay of a delayed job, from its intended enqueue time",
			set: func(c *Config, v string) error {
				d, err := conditions.ParseDist(v)
				c.Producers.Delay, c.Producers.DelayText = d, d.String()
				return err
			}},
		{Path: "producers.align", Default: "0s", Allowed: "a duration >= 0 (0: off), at most 24h", Matrix: true,
			Doc: "a delayed job's RunAt is rounded up to the next multiple of it from the run's start: with 1h every delayed job planned within an hour is due at the top of the next one (schedules that put thousands of jobs due at one instant)",
			set: func(c *Config, v string) error { return setDur(&c.Producers.Align, v, 0, 24*time.Hour) }},
		{Path: "producers.max_retries", Default: "3", Allowed: "an integer 0..100", Matrix: true,
			Doc: "NewJob.MaxRetries: failures before a job is dead-lettered (3 allows 4 runs)",
			set: func(c *Config, v string) error { return setInt(&c.Producers.MaxRetries, v, 0, 100) }},
		{Path: "producers.prefill", Default: "0", Allowed: "an integer 0..10000000", Matrix: true,
			Doc: "jobs loaded in bulk before the run (not measured, not throttled): the backlog it starts with; a list sweeps it",
			set: func(c *Config, v string) error { return setInt(&c.Producers.Prefill, v, 0, 10_000_000) }},
		{Path: "producers.prefill_delayed", Default: "0", Allowed: "a share 0..1", Matrix: true,
			Doc: "share of the prefill given a RunAt after the run's end: delayed jobs that only sit in the store (never run, never counted)",
			set: func(c *Config, v string) error { return setFloat(&c.Producers.PrefillDelayed, v, 0, 1) }},
		{Path: "producers.resend", Default: "0", Allowed: "a share 0..1", Matrix: true,
			Doc: "share of jobs whose Enqueue is sent a second time once the first returned (a producer retrying an enqueue whose reply it lost; seed 003's migration run twice): a store should refuse it (ErrDuplicateID); summary.json's counters say how many were sent and refused",
			set: func(c *Config, v string) error { return setFloat(&c.Producers.Resend, v, 0, 1) }},
		{Path: "producers.trace", Default: "", Allowed: "a CSV or JSON-lines file of arrivals (docs/traces.md)", Matrix: true,
			Doc: "replays yesterday's traffic: each line's job is sent at the run's start plus its offset (from the scenario file's directory; given with --set, from the working directory). The trace spans the run unless duration says less (producers.trace_loop repeats it); it replaces producers.rate and phases",
			set: func(c *Config, v string) error { c.Producers.Trace = strings.TrimSpace(v); return nil }},
		{Path: "producers.trace_scale", Default: "1", Allowed: "a number > 0, at most 100", Matrix: true,
			Doc: "the trace's rate times this: each arrival sent in whole copies and, for a fraction, once more with that probability (seeded)",
			set: func(c *Config, v string) error { return setFloat(&c.Producers.TraceScale, v, 1e-3, 100) }},
		{Path: "producers.trace_loop", Default: "false", Allowed: "true, false", Matrix: true,
			Doc: "start the trace over after its span, until the window ends",
			set: func(c *Config, v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return fmt.Errorf("%q is not true or false", v)
				}
				c.Producers.TraceLoop = b
				return nil
			}},
		{Path: "producers.max_backlog", Default: "10000", Allowed: "an integer >= 1", Matrix: true,
			Doc: "closed loop: producers pause while acknowledged but unfinished jobs exceed this",
			set: func(c *Config, v string) error { return setInt(&c.Producers.MaxBacklog, v, 1, 1<<30) }},
		{Path: "producers.depth", Default: "1000", Allowed: "an integer >= 1", Matrix: true,
			Doc: "producers.mode depth: the due backlog the producers keep",
			set: func(c *Config, v string) error { return setInt(&c.Producers.Depth, v, 1, 1<<30) }},
	}
}

// workerFields are the fields of the workers' loop: claims, acks, handler, leases.
func workerFields() []field {
	return []field{
		{Path: "workers.count", Default: "4", Allowed: "an integer 1..1024", Matrix: true,
			Doc: "worker goroutine groups, each with its own claim loop and worker id",
			set: func(c *Config, v string) error { return setInt(&c.Workers.Count, v, 1, 1024) }},
		{Path: "workers.concurrency", Default: "8", Allowed: "an integer 1..10000", Matrix: true,
			Doc: "jobs each worker runs at once",
			set: func(c *Config, v string) error { return setInt(&c.Workers.Concurrency, v, 1, 10000) }},
		{Path: "workers.claim_batch", Default: "1", Allowed: "an integer 1.." + strconv.Itoa(jobstore.MaxClaim), Matrix: true,
			Doc: "most jobs per Claim call (never more than free slots)",
			set: func(c *Config, v string) error { return setInt(&c.Workers.ClaimBatch, v, 1, jobstore.MaxClaim) }},
		{Path: "workers.claim_wait", Default: "1s", Allowed: "a duration >= 0, at most 1m", Matrix: true,
			Doc: "ClaimRequest.Wait: how long a Claim waits for work (blocking or polling, as the backend can)",
			set: func(c *Config, v string) error { return setDur(&c.Workers.ClaimWait, v, 0, time.Minute) }},
		{Path: "workers.ack_batch", Default: "1", Allowed: "an integer 1..1000", Matrix: true,
			Doc: "most jobs acknowledged per Complete call: 1 completes each job as its handler ends; N > 1 flushes when N are pending or ack_interval after the first (jobstore.CompleteAll)",
			set: func(c *Config, v string) error { return setInt(&c.Workers.AckBatch, v, 1, 1000) }},
		{Path: "workers.ack_interval", Default: "1ms", Allowed: "a duration >= 0 (0: flush what is pending without waiting), at most 1s", Matrix: true,
			Doc: "with ack_batch > 1: longest an acknowledgement waits for its batch to fill",
			set: func(c *Config, v string) error { return setDur(&c.Workers.AckInterval, v, 0, time.Second) }},
		{Path: "workers.handler", Default: "1ms", Allowed: conditions.DistAllowed, Matrix: true,
			Doc: "handler run time",
			set: func(c *Config, v string) error {
				d, err := conditions.ParseDist(v)
				c.Workers.Handler, c.Workers.HandlerText = d, d.String()
				return err
			}},
		{Path: "workers.fail", Default: "0", Allowed: "a probability 0..1", Matrix: true,
			Doc: "probability that a handler run fails (the job is retried with backoff, then dead-lettered)",
			set: func(c *Config, v string) error { return setFloat(&c.Workers.Fail, v, 0, 1) }},
		{Path: "workers.lease", Default: "30s", Allowed: "a duration >= 1ms, at most 1h", Matrix: true,
			Doc: "ClaimRequest.Lease; a handler running longer without heartbeat is recovered and run again",
			set: func(c *Config, v string) error { return setDur(&c.Workers.Lease, v, time.Millisecond, time.Hour) }},
		{Path: "workers.heartbeat", Default: "false", Allowed: "true, false", Matrix: true,
			Doc: "extend the lease while the handler runs",
			set: func(c *Config, v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return fmt.Errorf("%q is not true or false", v)
				}
				c.Workers.Heartbeat = b
				return nil
			}},
		{Path: "workers.heartbeat_interval", Default: "0", Allowed: "a duration >= 0 (0: lease/3), at most 1h", Matrix: true,
			Doc: "how often a heartbeat extends the lease",
			set: func(c *Config, v string) error { return setDur(&c.Workers.HeartbeatInterval, v, 0, time.Hour) }},
		{Path: "workers.recovery_interval", Default: "1s", Allowed: "a duration > 0, at most 1h", Matrix: true,
			Doc: "the run's recoverer calls Recover this often",
			set: func(c *Config, v string) error {
				return setDur(&c.Workers.RecoveryInterval, v, time.Millisecond, time.Hour)
			}},
		{Path: "workers.recovery_mode", Default: "auto", Allowed: "auto, lease, seed", Matrix: true,
			Doc: "auto: as workers.heartbeat says; lease: a heartbeat renews the lease every heartbeat_interval (lease/3); seed: no heartbeat, the lease counts from the claim like seed 002's timeout from StartedAt, so jobs longer than it run twice",
			set: func(c *Config, v string) error { return setEnum(&c.Workers.RecoveryMode, v, "auto", "lease", "seed") }},
	}
}

// workerPlaceFields are the fields of where the workers run, the maintenance loops, what a run expects.
func workerPlaceFields() []field {
	return []field{
		{Path: "workers.processes", Default: "0", Allowed: "an integer 0..64, at most workers.count", Matrix: true,
			Doc: "how many of the workers run as separate `aebench worker` processes (the same worker loop; events streamed to this process's ledger); worker_kill faults SIGKILL them. " +
				"A store with a worker loop of its own (asynq) is served in each process when the run has no faults and every worker is a process: " +
				"its concurrency option, not workers.concurrency, then sets the jobs each process runs at once",
			set: func(c *Config, v string) error { return setInt(&c.Workers.Processes, v, 0, 64) }},
		{Path: "workers.remote", Default: "0", Allowed: "an integer 0..64; processes + remote at most workers.count", Matrix: true,
			Doc: "how many of the workers are `aebench worker --coordinator HOST:PORT` processes, on this host or others, connecting over TCP to workers.listen (the worker-process protocol: events into this process's ledger, histograms merged here); a lost connection is a worker_lost fault the ledger survives",
			set: func(c *Config, v string) error { return setInt(&c.Workers.Remote, v, 0, 64) }},
		{Path: "workers.listen", Default: "127.0.0.1:0", Allowed: "host:port to listen on (port 0: any free port)", Matrix: false,
			Doc: "where the coordinator waits (up to 60s) for the workers.remote workers; the run prints the address to give them. The Redis address it hands them must be reachable from their hosts (redis.mode url with a routable address for real hosts)",
			set: func(c *Config, v string) error {
				if _, _, err := net.SplitHostPort(v); err != nil {
					return fmt.Errorf("%q is not host:port: %v", v, err)
				}
				c.Workers.Listen = v
				return nil
			}},
		{Path: "workers.remote_hosts", Default: "", Allowed: "comma-separated IP addresses, one per remote worker (127.0.0.2,127.0.0.3)", Matrix: false,
			Doc: "when set, aebench starts the remote workers itself, each connecting from one of these local addresses (distinct loopback addresses stand for hosts); empty: start them yourself on their hosts",
			set: func(c *Config, v string) error {
				for _, h := range strings.Split(v, ",") {
					if v != "" && net.ParseIP(strings.TrimSpace(h)) == nil {
						return fmt.Errorf("%q is not an IP address", strings.TrimSpace(h))
					}
				}
				c.Workers.RemoteHosts = v
				return nil
			}},
		{Path: "workers.recovery_batch", Default: "100", Allowed: "an integer 1.." + strconv.Itoa(jobstore.MaxClaim), Matrix: true,
			Doc: "max per Recover call (repeated while full)",
			set: func(c *Config, v string) error { return setInt(&c.Workers.RecoveryBatch, v, 1, jobstore.MaxClaim) }},
		{Path: "workers.mover_interval", Default: "50ms", Allowed: "a duration > 0, at most 1m", Matrix: true,
			Doc: "the run's mover calls Promote this often, for a jobstore.Mover backend whose option mover is background (bucket, dual; their default, claim, promotes inside Claim and gets no loop)",
			set: func(c *Config, v string) error {
				return setDur(&c.Workers.MoverInterval, v, time.Millisecond, time.Minute)
			}},
		{Path: "workers.monitor_interval", Default: "0", Allowed: "0 (no monitoring loop) or a duration from 10ms to 1m", Matrix: true,
			Doc: "a monitoring loop calls the store's Stats this often, as a metrics publisher would (seed 004 counts its jobs in progress with KEYS); its call time is the histogram stats",
			set: func(c *Config, v string) error {
				if v == "0" {
					c.Workers.MonitorInterval = 0
					return nil
				}
				return setDur(&c.Workers.MonitorInterval, v, 10*time.Millisecond, time.Minute)
			}},
		{Path: "workers.mover_batch", Default: "1000", Allowed: "an integer 1.." + strconv.Itoa(jobstore.MaxClaim), Matrix: true,
			Doc: "max per Promote call (repeated while full)",
			set: func(c *Config, v string) error { return setInt(&c.Workers.MoverBatch, v, 1, jobstore.MaxClaim) }},

		{Path: "expect.lost", Default: "none", Allowed: "none, allowed, unless_persistent", Matrix: true,
			Doc: "none: a lost job fails the run; allowed: lost jobs are reported as expected (e.g. a Redis restart without persistence); unless_persistent: allowed unless redis.persistence is aof-always",
			set: func(c *Config, v string) error {
				return setEnum(&c.Expect.Lost, v, "none", "allowed", "unless_persistent")
			}},
		{Path: "expect.dead_unstarted", Default: "none", Allowed: "none, allowed", Matrix: true,
			Doc: "none: a job dead-lettered on an attempt whose handler never started fails the run, unless a fault caught it in flight (its lease ran out after the kill); allowed: such dead letters are reported as expected",
			set: func(c *Config, v string) error {
				return setEnum(&c.Expect.DeadUnstarted, v, "none", "allowed")
			}},
		{Path: "slo.e2e_p99", Default: "0s", Allowed: "a duration >= 0 (0: no SLO), at most 1h",
			Doc: "with producers.rate swept: the e2e p99 bound of the maximum sustainable rate, the highest offered rate whose median e2e p99 stays under it while completions keep pace (>= 95% of offered); with a ramp phase: the knee, the offered rate of the ramp's first second whose e2e p99 goes over it",
			set: func(c *Config, v string) error { return setDur(&c.SLO.E2EP99, v, 0, time.Hour) }},
		{Path: "drift.windows", Default: "0", Allowed: "0 (no drift verdict), or 3 to 60", Matrix: true,
			Doc: "cuts the measured window into this many equal windows (6 over 30 minutes: 5-minute windows; the same shape under --set duration=5m), each with its used memory, memory per job held, fragmentation, Redis CPU and commands per job, e2e and queue-wait p99; the drift verdict compares the last window with the first: holds or drifts, with the ratio and a 95% interval from the trend across the windows",
			set: func(c *Config, v string) error {
				if v == "0" {
					c.Drift.Windows = 0
					return nil
				}
				return setInt(&c.Drift.Windows, v, 3, 60)
			}},
	}
}

// topLevel are the keys that are neither fields nor sections.
var topLevel = []string{"name", "description", "repeats", "calibration", "matrix", "backends", "faults", "phases", "jobs", "failure_windows"}

// setDur sets a duration field, bounded: a typo of years (8760h for 8h)
// must not start a run that never ends.
func setDur(dst *time.Duration, v string, min, max time.Duration) error {
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil {
		return fmt.Errorf("%q is not a duration (write e.g. 500ms, 10s, 2m)", v)
	}
	if d < min || d < 0 {
		if min == 0 {
			return fmt.Errorf("%s is negative", d)
		}
		return fmt.Errorf("%s is below the minimum %s", d, min)
	}
	if d > max {
		return fmt.Errorf("%s is above the maximum %s", d, conditions.FormatBound(max))
	}
	*dst = d
	return nil
}

func setInt(dst *int, v string, min, max int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	if n < min || n > max {
		return fmt.Errorf("%d is out of range %d..%d", n, min, max)
	}
	*dst = n
	return nil
}

func parseInt64(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	return n, nil
}

// setCapacity reads producers.capacity: jobs/s, or measure[(DURATION)].
func setCapacity(c *Config, v string) error {
	v = strings.TrimSpace(v)
	rest, ok := strings.CutPrefix(v, "measure")
	if !ok {
		c.Producers.CapacityProbe, c.Producers.CapacitySource = 0, "given in the scenario"
		return setFloat(&c.Producers.Capacity, v, 0, 1e7)
	}
	probe := 5 * time.Second
	if rest != "" {
		in, ok := strings.CutPrefix(rest, "(")
		in, ok2 := strings.CutSuffix(in, ")")
		d, err := time.ParseDuration(in)
		if !ok || !ok2 || err != nil || d < time.Second || d > 10*time.Minute {
			return fmt.Errorf("%q: allowed: measure, or measure(DURATION) with 1s <= DURATION <= 10m (measure(5s))", v)
		}
		probe = d
	}
	c.Producers.Capacity, c.Producers.CapacityProbe, c.Producers.CapacitySource = 0, probe, ""
	return nil
}

func setFloat(dst *float64, v string, min, max float64) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	if f < min || f > max {
		if min > 0 && f <= 0 {
			return fmt.Errorf("%g must be > 0", f)
		}
		return fmt.Errorf("%g is out of range %g..%g", f, min, max)
	}
	*dst = f
	return nil
}

func setEnum(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, ", "))
}

// FieldDocs lists every scenario field with its default, allowed values and
// meaning, for `aebench list --fields` and the README test.
func FieldDocs(reg *registry.Registry) [][4]string {
	out := [][4]string{
		{"name", "file name", "letters, digits, - _ .", "scenario name, used in the results folder name"},
		{"description", "", "text", "shown by aebench list"},
		{"repeats", "1", "an integer 1..100", "runs of each backend per matrix cell; runs go round by round (repeat r of every cell, then r+1), and each round starts one backend later in the list, so every backend takes every place in the order"},
		{"calibration", "on", "off, on, or a duration", "run the in-process null backend first in each cell to measure the harness's own overhead (on: as long as duration)"},
		{"matrix", "cross", "cross, zip", "cross: one cell per combination of the list-valued fields; zip: the lists (all of one length) vary together, cell i taking the i-th value of each"},
		{"backends", "(required)", strings.Join(reg.Names(), ", "), "list of names, or mappings {name, label, options}"},
		{"thresholds", "none", "a list of METRIC OP VALUE (e2e.p99 < 20ms, throughput > 10000, e2e.p99 < +10%)", "k6-style gates checked over the repeats' medians once every run has ended; a crossed one exits 4 (relative ones, in %, are checked by aebench compare against a baseline); aebench compare --metrics lists the metrics"},
		{"phases", "none", "a list of {name, duration, rate, ramp} (rate in jobs/s; ramp: true reaches it in a straight line from the previous phase's)", "an open loop's load profile over the measured window (duration is their sum; the warm-up runs at the first phase's rate); each phase gets its own results (offered, completed, backlog, latencies, catch-up)"},
		{"jobs", "none", "a list of kinds {name, share, payload, handler, fail, fail_class, delayed, delay, max_retries, tenants}, shares summing to 1; tenants " + conditions.TenantsAllowed, "the job mix: each job's kind and tenant are drawn from its id, so every backend runs the same mix; figures are split by kind and tenant (noisy/quiet p95, Jain's index, shares)"},
		{"failure_windows", "none", "a list of {from, for, share, class} (class rate_limit or fatal)", "retry storms: a share of the attempts of the jobs intended in the window fail; first-attempt latency before and during is reported"},
		{"faults", "none", "a list of faults (the kinds and their fields: Faults, below)", "the fault schedule every run (but calibration) gets: worker crashes and kills at crash points, recoverer/mover crashes, Redis restarts and pauses, network faults"},
	}
	fs := fields()
	sort.SliceStable(fs, func(i, j int) bool { return strings.Count(fs[i].Path, ".") < strings.Count(fs[j].Path, ".") })
	for _, f := range fs {
		out = append(out, [4]string{f.Path, f.Default, f.Allowed, f.Doc})
	}
	return out
}
