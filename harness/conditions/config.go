package conditions

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/trace"
	"github.com/aebench/aebench/jobstore"
)

// Config is the full set of conditions of one run: one backend under one
// load, after matrix expansion and defaults. It is written into summary.json
// beside every number so a number never travels without its conditions.
type Config struct {
	Scenario  string         `json:"scenario"`
	Seed      int64          `json:"seed"`
	Duration  time.Duration  `json:"duration_ns"`
	Warmup    time.Duration  `json:"warmup_ns"`
	Drain     time.Duration  `json:"drain_ns"`
	Time      TimeConfig     `json:"time"`
	Redis     RedisConfig    `json:"redis"`
	Network   NetworkConfig  `json:"network"`
	Client    string         `json:"client"`
	Encoding  string         `json:"encoding"`
	Store     StoreConfig    `json:"store"`
	Producers ProducerConfig `json:"producers"`
	Workers   WorkerConfig   `json:"workers"`
	Expect    ExpectConfig   `json:"expect"`
	SLO       SLOConfig      `json:"slo"`
	Drift     DriftConfig    `json:"drift,omitzero"`
	Backend   BackendSpec    `json:"backend"`
	// Faults is the scenario's fault schedule, the same for every run of
	// the plan but the calibration run.
	Faults []faults.Fault `json:"faults,omitempty"`
	// Phases is the open-loop load profile over the measured window
	// (phases.go); none: producers.rate throughout.
	Phases []Phase `json:"phases,omitempty"`
	// WarmupRate, from a first phase called warmup, is the warm-up's rate
	// (0: the first phase's); WarmupTimes the same as a multiple of the
	// capacity.
	WarmupRate  float64 `json:"warmup_rate,omitempty"`
	WarmupTimes float64 `json:"warmup_times_capacity,omitempty"`
	// Jobs is the job mix (mix.go); none: one kind, the workload of
	// producers and workers. FailWindows are the retry storms.
	Jobs        []JobKind    `json:"jobs,omitempty"`
	FailWindows []FailWindow `json:"failure_windows,omitempty"`
}

// RunSpec is one run of a plan.
type RunSpec struct {
	ID          string // c1-r1-zset; "r1-zset" or "zset" in a one-cell scenario
	Cell        int
	Repeat      int
	Calibration bool
	Config      Config
}

// NetworkConfig is the network between the run's clients and Redis.
type NetworkConfig struct {
	// RTT puts every connection of a run (producers, workers, recoverer,
	// mover; not the cost meter) behind an in-process proxy that delays
	// each direction by half of it (0: direct).
	RTT time.Duration `json:"rtt_ns"`
}

// SLOConfig is the service level a rate sweep looks for the highest
// sustainable rate under (zero: none).
type SLOConfig struct {
	E2EP99 time.Duration `json:"e2e_p99_ns"`
}

// DriftConfig asks for the drift verdict of a long run: the measured
// window cut into Windows equal windows (0: none), each with its memory,
// Redis cost and latencies, the last compared with the first.
type DriftConfig struct {
	Windows int `json:"windows,omitempty"`
}

// DriftWindow is the length of one drift window (0 without drift).
func (c Config) DriftWindow() time.Duration {
	if c.Drift.Windows < 2 {
		return 0
	}
	return c.Duration / time.Duration(c.Drift.Windows)
}

// ExpectConfig says which outcomes a run's conditions make expected, so
// the report states them instead of failing the run.
type ExpectConfig struct {
	// Lost is "none" (any lost job fails the run), "allowed", or
	// "unless_persistent" (allowed unless redis.persistence is aof-always).
	Lost string `json:"lost"`
	// DeadUnstarted is "none" (a job dead-lettered on an attempt that
	// never started fails the run unless a fault caught it in flight) or
	// "allowed".
	DeadUnstarted string `json:"dead_unstarted,omitempty"`
}

// LostAllowed reports whether lost jobs are expected under c.
func (c Config) LostAllowed() bool {
	switch c.Expect.Lost {
	case "allowed":
		return true
	case "unless_persistent":
		return c.Redis.Persistence != "aof-always"
	}
	return false
}

// RedisConfig says where the Redis comes from.
type RedisConfig struct {
	Mode    string `json:"mode"` // embedded, cluster, container, url
	URL     string `json:"url,omitempty"`
	Masters int    `json:"masters,omitempty"`
	// Replicas per master of a spawned cluster (asynchronous replication).
	Replicas int `json:"replicas,omitempty"`
	// Persistence of a spawned server: none, aof-everysec or aof-always.
	Persistence string `json:"persistence"`
	// Meter is "time" (INFO) or "instructions" (callgrind as well).
	Meter string `json:"meter,omitempty"`
	// HZ of a spawned server (redis-server --hz). Redis fires the timeouts of
	// blocked commands on this tick, so a claimer blocked until a delayed
	// job's RunAt wakes up to 1/HZ late: it is part of the conditions.
	HZ int `json:"hz"`
	// MaxMemory (bytes; 0: no limit) and MaxMemoryPolicy ("": the
	// server's default, noeviction) of a spawned server: what it does when
	// memory runs out, evict keys or refuse writes.
	MaxMemory       int64  `json:"maxmemory,omitempty"`
	MaxMemoryPolicy string `json:"maxmemory_policy,omitempty"`
	// MaxMemoryTimes, from redis.maxmemory "1.5x", sizes MaxMemory as a
	// multiple of the plan's expected working set (Config.WorkingSet).
	MaxMemoryTimes float64 `json:"maxmemory_times_working_set,omitempty"`
	// Save is the RDB save points of persistence rdb and rdb+aof-everysec
	// ("": a stock redis.conf's, StockSavePoints).
	Save string `json:"save,omitempty"`
	// CPUs pins a spawned server's main thread to these CPUs (a list such
	// as "1" or "2-3"; redis-server --server_cpulist), and the runner
	// keeps the harness off them: Redis has its cores to itself, and a
	// store-bound figure is the store's, not the share of two cores the
	// harness left it.
	CPUs string `json:"cpus,omitempty"`
}

// Working-set estimate: what a queue holds per job beyond its payload (the
// record's fields, its index entries, Redis's per-key overhead), from the
// strategies' measured memory per job (1.2-1.5 KiB at 256 B payloads), and
// a spawned server's memory before any job.
const (
	WorkingSetPerJob = 1200
	WorkingSetBase   = 1 << 20
)

// WorkingSet estimates the bytes a run's queue holds at its fullest: the
// jobs finished within store.retention (or the whole run, when retention
// is longer) and those waiting for their delay, each its payload plus
// WorkingSetPerJob, above WorkingSetBase. false when the arrivals are not
// a known open-loop rate (closed loop, phases, a trace, a capacity probe).
func (c Config) WorkingSet() (int64, bool) {
	p := c.Producers
	if p.Mode != "" && p.Mode != "open" || p.Rate <= 0 || len(c.Phases) > 0 || p.Trace != "" || p.CapacityProbe > 0 {
		return 0, false
	}
	run := (c.Warmup + c.Duration).Seconds()
	held := p.Rate*min(c.Store.Retention.Seconds(), run) + p.Rate*p.Delayed*p.Delay.Mean().Seconds() + float64(p.Prefill)
	return WorkingSetBase + int64(held*float64(p.Payload+WorkingSetPerJob)), true
}

// SavePoints are the RDB save points a spawned server runs with.
func (rc RedisConfig) SavePoints() string {
	if rc.Save != "" {
		return rc.Save
	}
	return StockSavePoints
}

// MaxMemoryPolicies are every Redis maxmemory-policy.
func MaxMemoryPolicies() []string {
	return []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}
}

// StockSavePoints are a stock redis.conf's RDB save points: a snapshot an
// hour after 1 change, 5 minutes after 100, a minute after 10000.
const StockSavePoints = "3600 1 300 100 60 10000"

// PersistencePromise is what a persistence mode promises to keep of the
// acknowledged writes when the redis-server process is SIGKILLed (the
// machine stays up: the page cache survives, so what was written reaches
// the disk).
func PersistencePromise(mode string) string {
	switch mode {
	case "aof-always", "aof-everysec", "rdb+aof-everysec":
		return "every acknowledged write: the AOF write happens before the reply, and a process crash keeps what the kernel holds (a power loss would add up to a second of everysec's writes, which this machine cannot show)"
	case "rdb":
		return "the last snapshot only: every write acknowledged since it is lost (a stock redis.conf's save points " + StockSavePoints + ": within a minute of 10000 changes, 5 minutes of 100, unless redis.save sets others)"
	}
	return "nothing: every acknowledged job is lost"
}

// KeepsAcknowledged says the persistence mode keeps every acknowledged
// write across a SIGKILL of the process (PersistencePromise).
func KeepsAcknowledged(mode string) bool {
	switch mode {
	case "aof-always", "aof-everysec", "rdb+aof-everysec":
		return true
	}
	return false
}

// Metered says Redis runs under callgrind (redis.meter instructions).
func (rc RedisConfig) Metered() bool { return rc.Meter == "instructions" }

// Text names the Redis a run used, with what of its configuration
// changes the numbers.
func (rc RedisConfig) Text(version string) string {
	s := rc.Mode + " redis"
	if version != "" {
		s += " " + version
	}
	if rc.Mode == "cluster" {
		s += fmt.Sprintf(" %d masters", rc.Masters)
		if rc.Replicas > 0 {
			s += fmt.Sprintf(" x %d replicas", rc.Replicas)
		}
	}
	if rc.Mode == "embedded" || rc.Mode == "cluster" {
		s += fmt.Sprintf(" hz %d", rc.HZ)
	}
	if rc.Persistence != "" && rc.Persistence != "none" {
		s += " " + rc.Persistence
		if rc.Save != "" {
			s += " (save " + rc.Save + ")"
		}
	}
	if rc.MaxMemory > 0 {
		s += fmt.Sprintf(" maxmemory %.0fMiB", float64(rc.MaxMemory)/(1<<20))
		if rc.MaxMemoryTimes > 0 {
			s += fmt.Sprintf(" (%gx the expected working set)", rc.MaxMemoryTimes)
		}
	}
	if rc.MaxMemoryPolicy != "" {
		s += " " + rc.MaxMemoryPolicy
	}
	if rc.CPUs != "" {
		s += " on cpus " + rc.CPUs
	}
	if rc.Metered() {
		s += " under callgrind (timings distorted; cost over the whole run)"
	}
	return s
}

// StoreConfig are the jobstore.Options the scenario controls.
type StoreConfig struct {
	PollInterval  time.Duration `json:"poll_interval_ns"`
	BackoffBase   time.Duration `json:"backoff_base_ns"`
	BackoffMax    time.Duration `json:"backoff_max_ns"`
	BackoffJitter float64       `json:"backoff_jitter"`
	Retention     time.Duration `json:"retention_ns"`
	// Shards is how many shards one logical queue is split into
	// (backends/shard); 1 is the backend itself.
	Shards int `json:"shards,omitempty"`
	// Queues (two or more) splits the store into queues claimed under
	// QueuePolicy (backends/queues); a job's kind names its queue.
	Queues      []QueueSpec `json:"queues,omitempty"`
	QueuePolicy string      `json:"queue_policy,omitempty"`
	// WaitReplicas and WaitTimeout: WAIT after each enqueue
	// (jobstore.Options.WaitReplicas).
	WaitReplicas int           `json:"wait_replicas,omitempty"`
	WaitTimeout  time.Duration `json:"wait_timeout_ns,omitempty"`
}

// ProducerConfig is the load.
type ProducerConfig struct {
	Count int `json:"count"`
	// Mode is "open" (a planned schedule at Rate, latency counted from the
	// plan), "closed" (flat out, bounded by MaxBacklog) or "depth" (the
	// due backlog kept at Depth).
	Mode  string  `json:"mode"`
	Depth int     `json:"depth,omitempty"`
	Rate  float64 `json:"rate"` // jobs/s, all producers together
	// Capacity is the store's capacity under these conditions as the
	// scenario states it (jobs/s; 0: unknown): phases' relative rates and
	// the fluid model use it.
	Capacity float64 `json:"capacity,omitempty"`
	// CapacityProbe, when the scenario says producers.capacity: measure,
	// is how long the closed-loop probe of the same backend and settings
	// runs before the cell's first run (runner); 0: Capacity is given.
	CapacityProbe time.Duration `json:"capacity_probe_ns,omitempty"`
	// CapacitySource says where Capacity came from: given in the scenario,
	// or the probe's measure with its conditions.
	CapacitySource string  `json:"capacity_source,omitempty"`
	Arrivals       string  `json:"arrivals"` // constant or poisson
	Batch          int     `json:"batch"`
	Payload        int     `json:"payload_bytes"`
	Delayed        float64 `json:"delayed_share"`
	Delay          Dist    `json:"-"`
	DelayText      string  `json:"delay"`
	// Align rounds a delayed job's RunAt up to the next multiple of it,
	// counted from the run's start (0: off): the top of the hour with 1h.
	Align      time.Duration `json:"align_ns,omitempty"`
	MaxRetries int           `json:"max_retries"`
	MaxBacklog int           `json:"max_backlog"`
	// Prefill jobs are loaded in bulk before the run starts and are not
	// measured: a backlog the run starts with. PrefillDelayed of them get a
	// RunAt after the run's end (a delayed set of that size, never run).
	Prefill        int     `json:"prefill"`
	PrefillDelayed float64 `json:"prefill_delayed"`
	// Resend is the share of jobs whose Enqueue the producer sends a second
	// time once the first returned: a producer retrying an enqueue whose
	// reply it lost, or seed 003's migration run again over jobs it had
	// already created (seed 003 lines 306-318).
	Resend float64 `json:"resend,omitempty"`
	// Trace replays arrivals from a file (package trace): the file as
	// given, TraceScale times its rate (whole copies of each arrival plus
	// a seeded share for a fraction), looped when TraceLoop; TraceData is
	// the parsed trace and TraceText states it for the record.
	Trace      string       `json:"trace,omitempty"`
	TraceScale float64      `json:"trace_scale,omitempty"`
	TraceLoop  bool         `json:"trace_loop,omitempty"`
	TraceText  string       `json:"trace_text,omitempty"`
	TraceData  *trace.Trace `json:"-"`
}

// WorkerConfig is the consuming side.
type WorkerConfig struct {
	Count             int           `json:"count"`
	Concurrency       int           `json:"concurrency"`
	ClaimBatch        int           `json:"claim_batch"`
	ClaimWait         time.Duration `json:"claim_wait_ns"`
	AckBatch          int           `json:"ack_batch"`       // most jobs per Complete call
	AckInterval       time.Duration `json:"ack_interval_ns"` // longest an ack waits for its batch
	Handler           Dist          `json:"-"`
	HandlerText       string        `json:"handler"`
	Fail              float64       `json:"fail_probability"`
	Lease             time.Duration `json:"lease_ns"`
	Heartbeat         bool          `json:"heartbeat"`
	HeartbeatInterval time.Duration `json:"heartbeat_interval_ns"`
	RecoveryInterval  time.Duration `json:"recovery_interval_ns"`
	RecoveryBatch     int           `json:"recovery_batch"`
	MoverInterval     time.Duration `json:"mover_interval_ns"`
	MoverBatch        int           `json:"mover_batch"`
	// MonitorInterval: a monitoring loop calls Stats this often (the
	// seeds' metrics publisher); 0: none.
	MonitorInterval time.Duration `json:"monitor_interval_ns,omitempty"`
	// RecoveryMode is auto (as Heartbeat says), lease (heartbeat on) or
	// seed (no heartbeat: the lease counts from the claim, as seed 002's
	// timeout counts from StartedAt).
	RecoveryMode string `json:"recovery_mode"`
	// Processes of the Count workers run as `aebench worker` processes.
	Processes int `json:"processes"`
	// Remote of the Count workers are `aebench worker --coordinator`
	// processes that connect over TCP to Listen; RemoteHosts, when set,
	// are the local addresses aebench starts them from itself.
	Remote      int    `json:"remote,omitempty"`
	Listen      string `json:"listen,omitempty"`
	RemoteHosts string `json:"remote_hosts,omitempty"`
}

// HeartbeatEvery is how often a worker extends a lease it holds, or 0 when
// workers send no heartbeat: heartbeat_interval, by default a third of the
// lease (the one place that default is written).
func (wc WorkerConfig) HeartbeatEvery() time.Duration {
	if !wc.Heartbeat {
		return 0
	}
	if wc.HeartbeatInterval > 0 {
		return wc.HeartbeatInterval
	}
	return wc.Lease / 3
}

// InProcess is how many of the workers run in this process.
func (w WorkerConfig) InProcess() int { return w.Count - w.Processes - w.Remote }

// BackendSpec is one entry of the scenario's backends list.
type BackendSpec struct {
	Name string `json:"name"`
	// Label names the backend in tables, plots and histogram tags; default Name.
	Label   string            `json:"label"`
	Options map[string]string `json:"options,omitempty"`
	// Line and Col locate the entry (its options, when given) in the
	// scenario file, for errors found only when the store is built.
	Line int `json:"-"`
	Col  int `json:"-"`
}

// Conditions is the one-line statement of a run's conditions printed above
// tables and on plots.
func (c Config) Conditions(redisVersion string) string {
	var load string
	if c.Producers.Mode == "open" {
		load = fmt.Sprintf("open loop %s %g jobs/s", c.Producers.Arrivals, c.Producers.Rate)
		if len(c.Phases) > 0 {
			load = fmt.Sprintf("open loop %s, phases %s", c.Producers.Arrivals, c.phasesText())
		}
		if c.Producers.TraceText != "" {
			load = "open loop, " + c.Producers.TraceText
		}
	} else {
		load = c.Producers.loopText()
	}
	load += prefillText(c.Producers)
	redis := c.Redis.Text(redisVersion)
	if c.Network.RTT > 0 {
		redis += ", rtt " + c.Network.RTT.String()
	}
	parts := []string{
		load,
		fmt.Sprintf("%d producers batch %d payload %dB", c.Producers.Count, c.Producers.Batch, c.Producers.Payload),
		delayedText(c.Producers),
		fmt.Sprintf("%d workers x %d, claim %d, ack batch %d interval %s", c.Workers.Count, c.Workers.Concurrency,
			c.Workers.ClaimBatch, c.Workers.AckBatch, c.Workers.AckInterval),
		fmt.Sprintf("handler %s fail %g%%", c.Workers.HandlerText, c.Workers.Fail*100),
		"client " + c.Client, redis, "encoding " + c.Encoding,
		fmt.Sprintf("poll %s", c.Store.PollInterval) + shardsText(c.Store),
		fmt.Sprintf("warm-up %s duration %s", c.Warmup, c.Duration),
	}
	if len(c.Jobs) > 0 {
		// The kinds replace the run's payload, delayed share, handler and
		// fail share.
		parts[1] = fmt.Sprintf("%d producers batch %d", c.Producers.Count, c.Producers.Batch)
		parts[2], parts[4] = "job mix "+c.MixText(), ""
		parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	}
	if len(c.FailWindows) > 0 {
		parts = append(parts, "failure windows "+c.WindowsText())
	}
	if len(c.Store.Queues) > 0 {
		var qs []string
		for _, q := range c.Store.Queues {
			qs = append(qs, fmt.Sprintf("%s:%d", q.Name, q.Weight))
		}
		parts = append(parts, fmt.Sprintf("queues %s claimed %s", strings.Join(qs, " "), c.Store.QueuePolicy))
	}
	if t := c.timeText(); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, ", ")
}

// ShortConditions is Conditions compact enough for a plot's subtitle.
func (c Config) ShortConditions(redisVersion string) string {
	load := fmt.Sprintf("open %g/s %s", c.Producers.Rate, c.Producers.Arrivals)
	if len(c.Phases) > 0 {
		load = fmt.Sprintf("open %s, phases %s", c.Producers.Arrivals, c.phasesText())
	}
	if c.Producers.TraceText != "" {
		load = c.Producers.TraceText
	}
	if c.Producers.Mode != "open" {
		load = c.Producers.loopText()
	}
	load += prefillText(c.Producers)
	redis := c.Redis.Text(redisVersion)
	s := fmt.Sprintf("%s, %s, %dx%d workers, handler %s fail %g%%, %s, %s, %s, poll %s, %s (+%s warm-up)",
		load, delayedText(c.Producers), c.Workers.Count, c.Workers.Concurrency,
		c.Workers.HandlerText, c.Workers.Fail*100, c.Client, redis, c.Encoding, c.Store.PollInterval.String()+shardsText(c.Store), c.Duration, c.Warmup)
	if len(c.Jobs) > 0 {
		s += fmt.Sprintf("; job mix of %d kinds (its handlers, delays and failures replace those above)", len(c.Jobs))
	}
	if c.Simulated() {
		s += fmt.Sprintf(", simulated x%g", c.Speed())
	}
	return s
}

// loopText states a closed or depth loop.
func (p ProducerConfig) loopText() string {
	if p.Mode == "depth" {
		return fmt.Sprintf("depth loop (due backlog kept at %d)", p.Depth)
	}
	return fmt.Sprintf("closed loop (backlog <= %d)", p.MaxBacklog)
}

func delayedText(p ProducerConfig) string {
	if p.Delayed == 0 {
		return "no delayed jobs"
	}
	s := fmt.Sprintf("%g%% delayed %s", math.Round(p.Delayed*1e4)/100, p.DelayText)
	if p.Align > 0 {
		s += fmt.Sprintf(" due at multiples of %s", p.Align)
	}
	return s
}

// StoreOptions is the jobstore.Options of a run under c on queue: the one
// place a run's store settings are made from its configuration, for the
// coordinator's stores and a worker process's alike.
func (c Config) StoreOptions(queue string) jobstore.Options {
	return jobstore.Options{
		Queue:        queue,
		Encoding:     jobstore.Encoding(c.Encoding),
		Retention:    c.Store.Retention,
		Backoff:      jobstore.Backoff{Base: c.Store.BackoffBase, Max: c.Store.BackoffMax, Jitter: c.Store.BackoffJitter},
		PollInterval: c.Store.PollInterval,
		Seed:         c.Seed,
		WaitReplicas: c.Store.WaitReplicas,
		WaitTimeout:  c.Store.WaitTimeout,
	}
}

// shardsText states a sharded queue and WAIT after enqueue, or "".
func shardsText(s StoreConfig) string {
	var out string
	if s.Shards > 1 {
		out = fmt.Sprintf(", %d shards", s.Shards)
	}
	if s.WaitReplicas > 0 {
		out += fmt.Sprintf(", WAIT %d replica(s) up to %s after enqueue", s.WaitReplicas, s.WaitTimeout)
	}
	return out
}

// prefillText states the backlog a run starts with and the share of
// enqueues sent twice, or "".
func prefillText(p ProducerConfig) string {
	var s string
	if p.Prefill > 0 {
		s = fmt.Sprintf(", prefill %d", p.Prefill)
		if p.PrefillDelayed > 0 {
			s += fmt.Sprintf(" (%g%% delayed past the run)", p.PrefillDelayed*100)
		}
	}
	if p.Resend > 0 {
		s += fmt.Sprintf(", %g%% of enqueues sent twice", p.Resend*100)
	}
	return s
}
