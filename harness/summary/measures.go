package summary

// The figures a run measures, as the engine fills them and summary.json
// holds them: the engine's Result is made of these, so a run's figures
// have one type from the collector to the page.

// Window says how long each phase lasted.
type Window struct {
	WarmupS   float64 `json:"warmup_s"`
	MeasuredS float64 `json:"measured_s"`
	DrainS    float64 `json:"drain_s"`
	Drained   bool    `json:"drained"`
	// Settled: the drain ended before its time because every job still
	// open was in no queue (lost, or a loss the system declares) or one the
	// system takes back later (settleFinished); the ledger judges them.
	Settled bool `json:"drain_settled,omitempty"`
}

// Throughput is in jobs/s over the measured window.
type Throughput struct {
	Offered   float64 `json:"offered_per_s"` // open loop: the planned rate; closed: 0
	Enqueued  float64 `json:"enqueued_per_s"`
	Completed float64 `json:"completed_per_s"`
}

// Counters are plain event counts of a run (all phases).
type Counters struct {
	EnqueueCalls  int64 `json:"enqueue_calls"`
	EnqueuedJobs  int64 `json:"enqueued_jobs"`
	EnqueueErrors int64 `json:"enqueue_errors"`
	// Resent counts jobs enqueued a second time (producers.resend), and
	// ResendRefused those the store refused as duplicates.
	Resent        int64 `json:"resent,omitempty"`
	ResendRefused int64 `json:"resend_refused,omitempty"`
	// Redelivered: job starts the system under test itself flagged as a
	// redelivery (a driver's started event with rd: Celery's kombu
	// restoring a message past visibility_timeout), beside the ledger's
	// duplicated executions.
	Redelivered    int64 `json:"redelivered,omitempty"`
	Throttled      int64 `json:"closed_loop_pauses"`
	ClaimCalls     int64 `json:"claim_calls"`
	ClaimEmpty     int64 `json:"claim_empty"`
	ClaimErrors    int64 `json:"claim_errors"`
	Claimed        int64 `json:"claimed"`
	Started        int64 `json:"started"`
	Completed      int64 `json:"completed"`
	Retried        int64 `json:"retried"`
	DeadLettered   int64 `json:"dead_lettered"`
	Fenced         int64 `json:"fenced"`
	CompleteErrors int64 `json:"complete_errors"`
	FailErrors     int64 `json:"fail_errors"`
	Extends        int64 `json:"extends"`
	ExtendErrors   int64 `json:"extend_errors"`
	RecoverCalls   int64 `json:"recover_calls"`
	RecoverErrors  int64 `json:"recover_errors"`
	Recovered      int64 `json:"recovered"`
	RecoveredDead  int64 `json:"recovered_dead"`
	// Returned counts jobs Recover put back without an attempt: handed to
	// a claimer that never touched them (jobstore.RecoverResult.Returned).
	Returned      int64 `json:"returned_unclaimed,omitempty"`
	PromoteCalls  int64 `json:"promote_calls"`
	PromoteErrors int64 `json:"promote_errors"`
	Promoted      int64 `json:"promoted"`
	// AckLost counts Complete or Fail calls that returned an error but had
	// been applied (read back from the store: the reply was lost).
	AckLost int64 `json:"ack_lost"`
	// CompleteCalls counts Complete calls, or CompleteAll calls with
	// workers.ack_batch > 1 (completed / complete_calls = jobs per ack call).
	CompleteCalls int64 `json:"complete_calls"`
	// StatsCalls and StatsErrors count the monitoring loop's Stats calls
	// (workers.monitor_interval).
	StatsCalls  int64 `json:"stats_calls,omitempty"`
	StatsErrors int64 `json:"stats_errors,omitempty"`
	// OOMRefused counts what Redis refused at maxmemory under noeviction
	// (its errors are counted in the *Errors fields too).
	OOMRefused OOMRefusals `json:"oom_refused,omitzero"`
}

// OOMRefusals counts the calls Redis refused with its OOM reply: jobs for
// Enqueue (not stored, not acknowledged), calls for the others (the job
// stays leased: the lease lapses and Recover takes it back, if Recover's
// own write is not refused too).
type OOMRefusals struct {
	Enqueued  int64 `json:"enqueued_jobs,omitempty"`
	Completes int64 `json:"completes,omitempty"`
	Fails     int64 `json:"fails,omitempty"`
	Recovers  int64 `json:"recovers,omitempty"`
}

// Any says Redis refused anything.
func (o OOMRefusals) Any() bool { return o != OOMRefusals{} }

// CostReport is Redis's cost of a run's cost window (the measured window,
// or the whole run under a meter: Hooks.CostWholeRun), from INFO deltas.
type CostReport struct {
	// Jobs is the divisor: jobs completed in the cost window.
	Jobs    int64   `json:"jobs"`
	WindowS float64 `json:"window_s"`
	// PerJob: commands, Redis CPU µs (sys+user), µs inside commands, bytes
	// Redis read and wrote, each per job.
	Commands       float64 `json:"commands_per_job"`
	RedisCPUMicros float64 `json:"redis_cpu_us_per_job"`
	CommandMicros  float64 `json:"command_us_per_job"`
	NetInBytes     float64 `json:"net_in_bytes_per_job"`
	NetOutBytes    float64 `json:"net_out_bytes_per_job"`
	// NetBytes is NetInBytes + NetOutBytes: the bytes a job moves on the wire.
	NetBytes float64 `json:"net_bytes_per_job"`
	// EvictedKeys is how many keys Redis evicted at maxmemory over the
	// run (INFO evicted_keys; a memory_pressure fault's ballast included).
	EvictedKeys    int64              `json:"evicted_keys,omitempty"`
	CommandsByName map[string]float64 `json:"commands_per_job_by_name"`
	// CommandMicrosByName is the time inside each command (commandstats
	// usec) per job.
	CommandMicrosByName map[string]float64 `json:"command_us_per_job_by_name,omitempty"`
	RedisCPUPercent     float64            `json:"redis_cpu_percent_of_one_core"`
	// Masters is how many servers the costs add up; on a cluster the
	// busiest one bounds throughput: its CPU per job (over all the jobs)
	// and its share of one core.
	Masters                int     `json:"masters,omitempty"`
	BusiestMasterCPUMicros float64 `json:"busiest_master_cpu_us_per_job,omitempty"`
	BusiestMasterPercent   float64 `json:"busiest_master_cpu_percent,omitempty"`
	PeakMemoryBytes        int64   `json:"peak_memory_bytes"`
	BaselineMemory         int64   `json:"baseline_memory_bytes"`
	MemoryDeltaBytes       int64   `json:"memory_delta_bytes"`
	MemoryPerJobBytes      float64 `json:"memory_per_job_bytes"`
	KeysPerJob             float64 `json:"keys_per_job"`
	// Instructions is what Redis executed per job over the window
	// (redis.meter instructions: callgrind), without serverCron and the
	// meter's INFO; CommandInstructions the part inside processCommand;
	// InstructionsByCommand each command's inclusive share (commands run by
	// a script count in the script's too). Zero when not metered.
	Instructions          float64            `json:"redis_instructions_per_job,omitempty"`
	CommandInstructions   float64            `json:"redis_command_instructions_per_job,omitempty"`
	InstructionsByCommand map[string]float64 `json:"redis_instructions_per_job_by_command,omitempty"`
	// MemoryNote says what MemoryPerJobBytes divides by.
	MemoryNote string `json:"memory_note"`
	Error      string `json:"error,omitempty"`
}

// HarnessCost is the harness's own work during a run.
type HarnessCost struct {
	CollectorTickMeanNs int64 `json:"collector_tick_mean_ns"`
	CollectorTickMaxNs  int64 `json:"collector_tick_max_ns"`
	Ticks               int   `json:"ticks"`
	// ClientCPUUsPerJob is this process's CPU time (user + system) over the
	// measured window per job completed in it: the harness, the store's
	// client code and the Redis client library (never Redis itself, a
	// process of its own; not worker processes). For the null calibration
	// store it is the harness's own cost per job.
	ClientCPUUsPerJob float64 `json:"client_cpu_us_per_job,omitempty"`
	// RunQueueWaitMsPerS is how long this process's threads waited for a
	// CPU, runnable but not running, per second of the measured window
	// (/proc/self/task/*/schedstat): when it is high, the machine, not the
	// store, set the tail.
	RunQueueWaitMsPerS float64 `json:"run_queue_wait_ms_per_s,omitempty"`
	// HostStealPercent is the share of the machine's CPU time (every CPU)
	// a hypervisor gave to other guests over the window (/proc/stat's
	// steal): on a VM a busy host slows Redis and the harness alike, and
	// the run-queue wait, which counts this machine's own contention,
	// does not show it.
	HostStealPercent float64 `json:"host_steal_percent,omitempty"`
	// ClientFixedUsPerS is this process's CPU per second with no job left:
	// the collector, the status line and idle workers, measured for
	// idleProbe after an open-loop run's drain. ClientPerJobUs is the rest
	// of the window's CPU per job (ClientCPUUsPerJob less the fixed part
	// spread over the window's jobs): at a low rate the fixed part is most
	// of ClientCPUUsPerJob, and this says what a job itself costs.
	ClientFixedUsPerS float64 `json:"client_fixed_us_per_s,omitempty"`
	ClientPerJobUs    float64 `json:"client_per_job_us,omitempty"`
	// ClientHarnessUsPerJob and ClientStoreUsPerJob split
	// ClientCPUUsPerJob by difference with the cell's null calibration run
	// (the same open-loop load on an in-process queue): its CPU a job is
	// the harness's own, an upper bound since the null queue's own work is
	// in it; the rest is the store's client code and its Redis client
	// library. Zero where the cell has no open-loop calibration (a closed
	// loop runs its calibration at another rate, so the difference would
	// not be one job's).
	ClientHarnessUsPerJob float64 `json:"client_harness_us_per_job,omitempty"`
	ClientStoreUsPerJob   float64 `json:"client_store_us_per_job,omitempty"`
	// ClientAllocsPerJob and ClientAllocBytesPerJob are this process's
	// heap allocations over the measured window per job completed in it
	// (runtime/metrics): counted, not timed, so a client-side regression
	// shows on a noisy runner too. Harness and client library together.
	ClientAllocsPerJob     float64 `json:"client_allocs_per_job,omitempty"`
	ClientAllocBytesPerJob float64 `json:"client_alloc_bytes_per_job,omitempty"`
	// MaxStallNs, on simulated time, is the longest the harness stalled
	// (a 1ms sleep's worst oversleep over the run), in real ns.
	MaxStallNs int64 `json:"max_stall_ns,omitempty"`
}

// PrefillResult is what loading the prefilled backlog took.
type PrefillResult struct {
	Jobs    int64   `json:"jobs"`
	Delayed int64   `json:"delayed"`
	LoadS   float64 `json:"load_s"`
	JobsPS  float64 `json:"jobs_per_s"`
}
