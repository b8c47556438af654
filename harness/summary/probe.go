package summary

// PathProbe is what package probe measured after a metered run (redis.meter
// instructions), on the run's Redis emptied: each path a job can take
// through the store, in a window of its own, so a regression in a path that
// few of the run's jobs take (recovery; at a low rate, the pop path) is not
// diluted by the others; what Redis stores a job; and the allocations a
// claimed job costs the process that claims and completes it.
type PathProbe struct {
	// Jobs is the jobs each path's window took (recovery: the leases let
	// lapse).
	Jobs int `json:"jobs"`
	// Paths by name: enqueue, delayed, pop, complete, handoff, fail,
	// recover (package probe's doc says what each window runs).
	Paths map[string]PathCost `json:"paths"`
	// StoredBytesPerJob is MEMORY USAGE (SAMPLES 0: every element) summed
	// over the queue's keys after the enqueue window, divided by the jobs
	// it enqueued: records and indexes, as the allocator holds them.
	StoredBytesPerJob float64 `json:"stored_bytes_per_job"`
	// RecordBytesPerJob is the part of it in hashes and strings: the job
	// records, whose bytes repeat exactly run to run (an index's do not:
	// skiplist levels are random, stream nodes depend on the IDs' times),
	// so the gate reads this one.
	RecordBytesPerJob float64 `json:"record_bytes_per_job"`
	// ClientAllocsPerClaimedJob is this process's heap allocations
	// (runtime.MemStats.Mallocs, tiny ones included) over the pop and
	// complete windows, per job: the store's and the Redis client's work
	// for one claimed and completed job, as a worker process runs it.
	ClientAllocsPerClaimedJob float64 `json:"client_allocs_per_claimed_job"`
	// Error says why the probe stopped early; the paths before it stand.
	Error string `json:"error,omitempty"`
}

// PathCost is one path's window, per job.
type PathCost struct {
	Jobs int64 `json:"jobs"`
	// Instructions Redis executed (callgrind), without serverCron and INFO;
	// CommandInstructions the part inside commands (processCommand), which
	// leaves out reading and writing sockets: the hand-off window polls
	// INFO until its claimer blocks, a timing-dependent number of times,
	// and INFO's socket work counts in Instructions only. The gate reads
	// CommandInstructions.
	Instructions        float64 `json:"redis_instructions_per_job"`
	CommandInstructions float64 `json:"redis_command_instructions_per_job"`
	// Commands by commandstats, counting those inside scripts.
	Commands float64 `json:"commands_per_job"`
	// Scripts are the scripts and functions the store ran, by name, in
	// calls per job.
	Scripts map[string]float64 `json:"script_calls_per_job,omitempty"`
}
