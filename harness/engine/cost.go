package engine

import "context"

// CostMeter takes Redis's cost of a run; nil for the null backend.
type CostMeter interface {
	// Begin runs before any load (reset stats, start the memory sampler).
	Begin(ctx context.Context) error
	// Mark is the start of the cost window: the measured window's, or
	// right after Begin when Hooks.CostWholeRun.
	Mark(ctx context.Context) error
	// End is the end of the window; jobs (completed in the window) is the
	// divisor for per-job costs, acked (so far) the one for memory.
	End(ctx context.Context, jobs, acked int64) error
	// Finish stops sampling and returns the cost.
	Finish() *CostReport
}

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
	NetBytes       float64            `json:"net_bytes_per_job"`
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

// markCost opens the cost window when wholeRun says which one this is:
// the whole run's (at its start) or the measured window's (at warm-up's
// end). Hooks.CostWholeRun picks one; the other call does nothing.
func (e *engine) markCost(ctx context.Context, wholeRun bool) error {
	if e.hooks.Cost == nil || e.hooks.CostWholeRun != wholeRun {
		return nil
	}
	return e.hooks.Cost.Mark(ctx)
}

// endCost closes the window markCost opened, dividing by jobs.
func (e *engine) endCost(ctx context.Context, wholeRun bool, jobs, acked int64) {
	if e.hooks.Cost == nil || e.hooks.CostWholeRun != wholeRun {
		return
	}
	if err := e.hooks.Cost.End(ctx, jobs, acked); err != nil {
		e.noteErr(err)
	}
}
