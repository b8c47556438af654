// Package summary is the record of a plan, the one results model from the
// ledger to the page: the plan, the environment, every run with its
// conditions, figures (measures.go: the types the engine fills), latencies,
// ledger, cost and faults, and the statistics over repeats. summary.json is
// this record as JSON: Read is its one decoder, and the summary output
// (package output) its one writer. It sits below the engine, which fills
// a run's figures in its types, and imports only plain data
// (conditions, ledger, faults, stats), so whatever reads a result links no
// backend.
package summary

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/stats"
)

// SchemaVersion is summary.json's schema version, the one that carries
// the statistics block; bump it (in package stats) on any change a reader
// of older files would misread.
const SchemaVersion = stats.SchemaVersion

// SchemaNoStatistics is the version of a summary.json without the
// statistics block (a plan still running, or older files).
const SchemaNoStatistics = 1

// Run statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"      // lost, unexpected or early jobs
	StatusInterrupted = "interrupted" // Ctrl-C: numbers so far, no verdict
	StatusError       = "error"       // infrastructure or configuration
	// StatusNotApplicable: the scenario uses what the backend does not
	// declare (delayed jobs on the floor); the run was not made.
	StatusNotApplicable = "not applicable"
)

// Summary is summary.json.
type Summary struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          string       `json:"tool"`
	Scenario      ScenarioInfo `json:"scenario"`
	Environment   Environment  `json:"environment"`
	StartedAt     time.Time    `json:"started_at"`
	FinishedAt    time.Time    `json:"finished_at,omitzero"`
	// Complete: every planned run ran. False while running, after Ctrl-C
	// or after an infrastructure error.
	Complete    bool `json:"complete"`
	Interrupted bool `json:"interrupted"`
	// Error is what stopped the plan (no Redis, a cluster that did not
	// start, a file that could not be written): the cause a CI artifact
	// needs. Empty when the plan ran to its end.
	Error string            `json:"error,omitempty"`
	Units map[string]string `json:"units"`
	Runs  []RunSummary      `json:"runs"`
	// HarnessOverhead is what the harness itself adds, from the calibration
	// runs and the dispatch/bookkeeping histograms of every run.
	HarnessOverhead *Overhead `json:"harness_overhead,omitempty"`
	PlotError       string    `json:"plot_error,omitempty"`
	// Statistics is the median and 95% CI over repeats per backend and
	// metric (package verdict), written once the last run has ended.
	Statistics *stats.Block `json:"statistics,omitempty"`
	// Thresholds is what the scenario's thresholds block found over the
	// statistics (absolute entries; relative ones wait for compare).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// SLO is the maximum sustainable rate per backend (slo.e2e_p99 with a
	// swept producers.rate).
	SLO []SLOResult `json:"slo,omitempty"`
	// Scaling is the curve of a sweep over redis.masters, with the capacity
	// projection and what bound each point (package runner, scaling.go).
	Scaling []ScalingPoint `json:"scaling,omitempty"`
}

// ScalingPoint is one backend at one cluster size, medians over repeats.
type ScalingPoint struct {
	Backend    string  `json:"backend"`
	Masters    int     `json:"masters"`
	Shards     int     `json:"shards"`
	Throughput float64 `json:"jobs_per_s"`
	// Efficiency is jobs/s over linear scaling from the smallest cluster
	// of the sweep: T(m) / (T(m0) * m/m0); 1 at m0.
	Efficiency float64 `json:"efficiency"`
	// RedisCPUMicros is all masters' CPU per job, BusiestMicros the busiest
	// master's, ClientMicros the aebench process's.
	RedisCPUMicros float64 `json:"redis_cpu_us_per_job"`
	BusiestMicros  float64 `json:"busiest_master_cpu_us_per_job"`
	ClientMicros   float64 `json:"client_cpu_us_per_job"`
	// BusiestPercent is the busiest master's share of one core; CoresBusy
	// the cores Redis and aebench kept busy together, of CPUs.
	BusiestPercent float64 `json:"busiest_master_cpu_percent"`
	CoresBusy      float64 `json:"cores_busy"`
	CPUs           int     `json:"cpus"`
	// ProjectedRedis is the jobs/s the cluster would take with a core per
	// master (1e6 / BusiestMicros), ProjectedEfficiency its efficiency
	// against linear like Efficiency, ClientCores the client cores that
	// rate needs (at ClientMicros a job). ProjectedHere is this machine's
	// ceiling: CPUs / (Redis + client CPU per job).
	ProjectedRedis      float64 `json:"projected_jobs_per_s_core_per_master"`
	ProjectedEfficiency float64 `json:"projected_efficiency"`
	ClientCores         float64 `json:"client_cores_needed"`
	ProjectedHere       float64 `json:"projected_jobs_per_s_this_machine"`
	// Bound names the resource that limited the point.
	Bound string  `json:"bound"`
	Lost  float64 `json:"lost"`
}

// SLOResult is a backend's maximum sustainable rate under slo.e2e_p99,
// from a sweep of producers.rate.
type SLOResult struct {
	Backend string  `json:"backend"`
	BoundNs int64   `json:"e2e_p99_bound_ns"`
	MaxRate float64 `json:"max_rate"` // 0: no tested rate held
	// FirstMiss is the lowest tested rate that did not hold (0: all held),
	// Why what it missed by.
	FirstMiss float64   `json:"first_miss,omitempty"`
	Why       string    `json:"why,omitempty"`
	Tested    []float64 `json:"tested"`
}

// ThresholdResult is one threshold of the scenario and what it found.
type ThresholdResult struct {
	Threshold string `json:"threshold"`
	// Status: passed, crossed, unchecked (no job store measured the
	// metric) or baseline (relative: checked by aebench compare).
	Status string `json:"status"`
	// Crossings: one line per group that crossed it, with the median, the
	// repeats and the 95% CI.
	Crossings []string `json:"crossings,omitempty"`
}

// ScenarioInfo is the scenario as given.
type ScenarioInfo struct {
	Name        string   `json:"name"`
	File        string   `json:"file"`
	Description string   `json:"description,omitempty"`
	Overrides   []string `json:"overrides,omitempty"`
	// Thresholds is the scenario's thresholds block as written; compare
	// applies its relative entries against a baseline.
	Thresholds    []string   `json:"thresholds,omitempty"`
	Repeats       int        `json:"repeats"`
	CalibrationNs int64      `json:"calibration_ns"`
	Cells         []CellInfo `json:"cells"`
	Source        string     `json:"source"`
	// Warnings are the file's doubts that are not errors (the run prints
	// them first).
	Warnings []string `json:"warnings,omitempty"`
}

// CellInfo names a matrix cell.
type CellInfo struct {
	Index int      `json:"index"`
	Vary  []string `json:"vary"`
}

// RunSummary is one run in summary.json.
type RunSummary struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Backend     string `json:"backend"`
	Cell        int    `json:"cell"`
	Repeat      int    `json:"repeat"`
	Calibration bool   `json:"calibration"`
	// Status is ok, failed (lost, unexpected or early jobs), interrupted or error.
	Status   string   `json:"status"`
	Error    string   `json:"error,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// Conditions is the one-line statement printed with every number.
	Conditions string `json:"conditions"`
	// ResolutionNs, on simulated time, is what one real millisecond is in
	// simulated time: latencies below it are the harness's and Redis's own
	// time, not the design's, and tables print them as "<" it.
	ResolutionNs int64 `json:"resolution_ns,omitempty"`
	// Phases are the load profile's phases, each with its own figures
	// (phases:; absent without one).
	Phases []PhaseResult `json:"phases,omitempty"`
	// Mix is the jobs split by kind, tenant and failure window (absent
	// without jobs: or failure_windows:).
	Mix *MixResult `json:"mix,omitempty"`
	// Drift is the run cut into drift.windows windows and the drift
	// verdict (absent without drift.windows).
	Drift *Drift `json:"drift,omitempty"`
	// Health is whether the machine let the harness measure: healthy, or
	// suspect with each reason and its figure (package health).
	Health *Health `json:"health,omitempty"`
	// TimeBase, on simulated time, says which of the run's figures are in
	// simulated time and which in real time, and which latencies real
	// wake-up delay times the speed can account for; nil on real time.
	TimeBase     *TimeBase         `json:"time_base,omitempty"`
	Config       conditions.Config `json:"config"`
	Redis        *RedisInfo        `json:"redis,omitempty"`
	Client       string            `json:"client"`
	Capabilities []string          `json:"capabilities"`
	// Kind is the backend's kind (job store, reference, peer, calibration);
	// Limits what it does not guarantee, for a reference or a peer.
	Kind   string `json:"kind,omitempty"`
	Limits string `json:"limits,omitempty"`
	// PeerMode, for a peer: contract (finished jobs kept for
	// store.retention) or native (the peer's own defaults for them).
	PeerMode string `json:"peer_mode,omitempty"`
	// CountNoise is the spread the backend declares in its counted per-job
	// costs (registry.Backend.CountNoise), and why.
	CountNoise    float64 `json:"count_noise,omitempty"`
	CountNoiseWhy string  `json:"count_noise_why,omitempty"`
	// NotApplicable says why the run was not made (Status not applicable).
	NotApplicable string `json:"not_applicable,omitempty"`
	// Ratios compare the run with the reference floor ("floor") and the
	// cell's best strategy ("best strategy": the job store with the most
	// jobs/s up to the offered rate, ties within 1% to the least Redis
	// CPU per job) measured in the same cell of the same plan;
	// Ratio.Against names the run.
	Ratios map[string]Ratio `json:"ratios,omitempty"`
	// HarnessFloor compares the run's e2e minus handler p99 with the same
	// p99 of its cell's null calibration run (the harness's own); nil
	// without a calibration run.
	HarnessFloor *HarnessFloor `json:"harness_floor,omitempty"`
	// Prefill is the backlog loaded before the run (producers.prefill).
	Prefill *PrefillResult `json:"prefill,omitempty"`
	// MoverLoop: the harness ran a Promote loop (workers.mover_interval).
	MoverLoop  bool       `json:"mover_loop"`
	StartedAt  time.Time  `json:"started_at"`
	Window     Window     `json:"window"`
	Throughput Throughput `json:"throughput"`
	// PeakBacklog is the most jobs waiting (acknowledged, not finished, not
	// in a handler) at any once-a-second sample.
	PeakBacklog int64 `json:"peak_backlog"`
	// LatencyNs maps a histogram name to p50, p90, p99, p99.9, p99.99, max,
	// mean and count, in ns.
	LatencyNs map[string]map[string]float64 `json:"latency_ns"`
	Ledger    ledger.Report                 `json:"ledger"`
	Counters  Counters                      `json:"counters"`
	Cost      *CostReport                   `json:"cost"`
	Probe     *PathProbe                    `json:"probe,omitempty"`
	Harness   HarnessCost                   `json:"harness"`
	Files     RunFiles                      `json:"files"`
	// Recovery is what the run's faults did (absent without faults): per
	// fault the jobs in flight, how long until each started again, the
	// duplicates and losses they caused.
	Recovery *faults.Summary `json:"recovery,omitempty"`
	// Audit is what the store counted of its own design after the drain
	// (jobstore.Auditor: pending entries left behind, a seed variant's
	// duplicate entries, early promotions...); AuditError why it could not.
	Audit      map[string]int64 `json:"audit,omitempty"`
	AuditError string           `json:"audit_error,omitempty"`
	// Census is what the queue left in Redis after the drain: its keys by
	// role and type, the records the contract keeps, and leaks
	// (jobstore.Censuser); CensusError why it could not be taken.
	Census      *jobstore.Census `json:"census,omitempty"`
	CensusError string           `json:"census_error,omitempty"`
	// Snapshot: under RDB persistence with a redis_restart, the losses
	// beside the jobs acknowledged after the last snapshot.
	Snapshot *SnapshotCheck `json:"snapshot,omitempty"`
	// StallNote, on simulated time, flags reruns that a stall of the
	// harness longer than the lease's real length may explain.
	StallNote string `json:"stall_note,omitempty"`
	// Served: the store ran its own worker loop with aebench's handler in
	// it (jobstore.Serving: asynq's Server): one loop for all in-process
	// workers, or one per worker process, each running as many jobs as
	// the store's own concurrency option allows; workers.concurrency and
	// the claim and ack batches did not apply.
	Served bool `json:"served,omitempty"`
}

// PhaseResult is one phase of a run's load profile and what it measured,
// from the run's per-second series: times in the run's time base, from the
// run's start; rates in jobs/s of that base.
type PhaseResult struct {
	Name          string  `json:"name"`
	StartS        float64 `json:"start_s"`
	EndS          float64 `json:"end_s"`
	OfferedPerS   float64 `json:"offered_per_s"`
	EnqueuedPerS  float64 `json:"enqueued_per_s"`
	CompletedPerS float64 `json:"completed_per_s"`
	// The due backlog (acknowledged, due, not running) at the phase's
	// first second, its highest, and its last.
	BacklogStart int64 `json:"backlog_start"`
	BacklogPeak  int64 `json:"backlog_peak"`
	BacklogEnd   int64 `json:"backlog_end"`
	// E2EP99WorstMs is the highest of the phase's per-second e2e p99s;
	// ScheduleLagP99WorstMs the same of the producers' lateness against
	// the profile: a profile the producers could not keep shows here.
	E2EP99WorstMs         float64 `json:"e2e_p99_worst_second_ms"`
	ScheduleLagP99WorstMs float64 `json:"schedule_lag_p99_worst_second_ms"`
	// CatchUpS, for a phase offered less than the one before it: from its
	// start until the due backlog is back within 10% (or 10 jobs) of where
	// it stood when the surge began and the producers are back on their
	// plan; -1 when it never got back.
	CatchUpS *float64 `json:"catch_up_s,omitempty"`
	// OfCapacity, for a phase offered more than producers.capacity: its
	// completed jobs/s over the capacity (the throughput it sustained
	// under overload).
	OfCapacity float64 `json:"completed_of_capacity,omitempty"`
	// Degraded says the phase sustained under 0.95 of the capacity while
	// offered more: the store (or the harness) degraded under overload.
	Degraded string `json:"degraded,omitempty"`
	// Model, for a phase under the capacity after one over it: what the
	// fluid model predicts from the capacity, and whether the measured
	// catch-up is more than 25% away from it (ModelGap says so).
	Model    *FluidModel `json:"fluid_model,omitempty"`
	ModelGap string      `json:"fluid_model_gap,omitempty"`
	// KneePerS, for a ramp under slo.e2e_p99: the offered rate of the
	// first second whose e2e p99 went over the bound (the knee); -1 when
	// the ramp held it to its end.
	KneePerS *float64 `json:"knee_per_s,omitempty"`
	// LatencyNs: the phase's e2e, queue-wait, lateness and producer
	// schedule-lag percentiles, over the seconds the phase spans (as
	// runs[].latency_ns).
	LatencyNs map[string]map[string]float64 `json:"latency_ns,omitempty"`
	// Jobs: the ledger's judgement of the jobs intended in the phase.
	Jobs ledger.Tally `json:"jobs"`
	// RedisCPUPerJobUs and CommandsPerJob: Redis's CPU and commands over
	// the phase's seconds per job completed in them (0: not sampled, or
	// nothing completed).
	RedisCPUPerJobUs float64 `json:"redis_cpu_per_job_us,omitempty"`
	CommandsPerJob   float64 `json:"commands_per_job,omitempty"`
	// EvictedKeys is the keys Redis evicted at maxmemory in the phase's
	// seconds (INFO evicted_keys).
	EvictedKeys int64 `json:"evicted_keys,omitempty"`
}

// FluidModel is the fluid model's prediction for an overload at rate λo
// for T against a capacity μ, then a recovery at λr < μ: a backlog of
// (λo - μ)·T, drained in backlog / (μ - λr).
type FluidModel struct {
	CapacityPerS float64 `json:"capacity_per_s"`
	BacklogJobs  float64 `json:"backlog_jobs"`
	CatchUpS     float64 `json:"catch_up_s"`
}

// Health statuses.
const (
	Healthy = "healthy"
	Suspect = "suspect"
)

// Health is a run's measurement health: whether the machine, not the
// store, may have set its numbers. The figures it was judged on are
// kept beside the verdict.
type Health struct {
	Status  string   `json:"status"`
	Reasons []string `json:"reasons,omitempty"`
	// The figures judged (HarnessCost's and the latencies' of the same
	// names); CalibrationP99Ns: the cell's calibration run's e2e minus
	// handler p99, when it made the run suspect.
	RunQueueWaitMsPerS float64 `json:"run_queue_wait_ms_per_s"`
	ScheduleLagP99Ns   float64 `json:"schedule_lag_p99_ns,omitempty"`
	CollectorTickMaxNs int64   `json:"collector_tick_max_ns"`
	CalibrationP99Ns   float64 `json:"calibration_p99_ns,omitempty"`
	HostStealPercent   float64 `json:"host_steal_percent,omitempty"`
}

// Suspect marks the health suspect for why.
func (h *Health) Suspect(why string) {
	h.Status = Suspect
	h.Reasons = append(h.Reasons, why)
}

// IsSuspect says the run's numbers may be the machine's (false for a run
// not judged).
func (h *Health) IsSuspect() bool { return h != nil && h.Status == Suspect }

// Text is "healthy" or "suspect: <reasons>".
func (h *Health) Text() string {
	if h == nil {
		return ""
	}
	if h.Status != Suspect {
		return Healthy
	}
	return Suspect + ": " + strings.Join(h.Reasons, "; ")
}

// TimeBase states a simulated run's units once: every figure of the run
// is in simulated time but those Real names, which are measured on the
// wall clock and not scaled by the speed.
type TimeBase struct {
	Base  string  `json:"base"`
	Speed float64 `json:"speed"`
	// Simulated and Real name the run's fields in each time base.
	Simulated []string `json:"simulated"`
	Real      []string `json:"real"`
	// WakeBoundNs is real wake-up delay times the speed: Redis fires a
	// blocked command's timeout on its 1/hz tick, and the harness's timers
	// wake a few milliseconds late, so (1/hz + 2ms) x speed is what a
	// latency can read with the design adding nothing. WakeBound lists the
	// run's latency figures (histogram.quantile) above the resolution and
	// at or below it: the harness's clock, not the design, may set them.
	WakeBoundNs int64    `json:"wake_bound_ns"`
	WakeBound   []string `json:"wake_bound,omitempty"`
}

// Simulated time's fields, for TimeBase.
var (
	simulatedFields = []string{"window", "throughput", "latency_ns", "ledger.max_early_ns", "recovery (at_s, run_at_s, recovery_ns, recovery_max_ns)",
		"timeseries.csv (second; counts over span_s)"}
	realFields = []string{"cost (Redis CPU and commands per job, the cost window, redis_cpu_percent of one real second)",
		"harness (client CPU, dispatch and bookkeeping, collector ticks, run-queue wait)", "stall_note", "prefill load time"}
)

// NewTimeBase is the time base of a run at speed on a Redis ticking at hz
// (0: unknown, Redis's default 10), with its latency figures checked
// against the wake-up bound; nil on real time (speed 1).
func NewTimeBase(speed float64, hz int, resolutionNs int64, latency map[string]map[string]float64) *TimeBase {
	if speed <= 1 {
		return nil
	}
	if hz <= 0 {
		hz = 10
	}
	wake := (time.Second/time.Duration(hz) + 2*time.Millisecond).Nanoseconds()
	tb := &TimeBase{Base: "simulated", Speed: speed, Simulated: simulatedFields, Real: realFields,
		WakeBoundNs: int64(float64(wake) * speed)}
	for _, tag := range slices.Sorted(maps.Keys(latency)) {
		for _, q := range []string{"p50", "p99", "p99.9"} {
			if v, ok := latency[tag][q]; ok && v >= float64(resolutionNs) && v <= float64(tb.WakeBoundNs) {
				tb.WakeBound = append(tb.WakeBound, tag+"."+q)
			}
		}
	}
	return tb
}

// WakeBounded says whether a latency of ns may be real wake-up delay times
// the speed (above the resolution, at or below WakeBoundNs).
func (tb *TimeBase) WakeBounded(ns float64, resolutionNs int64) bool {
	return tb != nil && ns >= float64(resolutionNs) && ns <= float64(tb.WakeBoundNs)
}

// ServedNote says what a served run (RunSummary.Served) means, for the
// terminal's note and the report page's.
const ServedNote = "the store's own worker loop ran aebench's handler (served, as its users run it): " +
	"one loop for all in-process workers, or one per worker process, each running as many jobs as the store's concurrency option allows; " +
	"workers.concurrency, claim_batch and ack_batch did not apply"

// Ratio is one run's figures divided by a reference run's (repeats
// averaged): above 1 means more jobs/s, more Redis CPU, more commands.
// Zero where either side has no figure.
type Ratio struct {
	// Against is the reference runs' label.
	Against        string  `json:"against"`
	Throughput     float64 `json:"throughput"`
	RedisCPUPerJob float64 `json:"redis_cpu_per_job"`
	CommandsPerJob float64 `json:"commands_per_job"`
	// QueueWaitP50 and QueueWaitP99 are the run's queue-wait percentiles
	// over the reference's (its mean over its repeats; absent when either
	// has none): issue 24 asks each blocking strategy for at most 1.3x the
	// floor's at a low rate (scenarios/latency.yaml).
	QueueWaitP50 float64 `json:"queue_wait_p50,omitempty"`
	QueueWaitP99 float64 `json:"queue_wait_p99,omitempty"`
}

// RunFiles names a run's files, relative to the results folder.
type RunFiles struct {
	HLog string            `json:"hlog"`
	HGRM map[string]string `json:"hgrm"`
}

// Overhead reports the harness's own cost.
type Overhead struct {
	Method      string            `json:"method"`
	Calibration []CalibrationInfo `json:"calibration"`
}

// CalibrationInfo is one null-backend run: its end-to-end latency minus the
// handler's run time is what the harness adds per job.
type CalibrationInfo struct {
	RunID        string  `json:"run_id"`
	Cell         int     `json:"cell"`
	E2EP50Ns     float64 `json:"e2e_p50_ns"`
	E2EP99Ns     float64 `json:"e2e_p99_ns"`
	HandlerP50Ns float64 `json:"handler_p50_ns"`
	HandlerP99Ns float64 `json:"handler_p99_ns"`
	// OverheadP50Ns and OverheadP99Ns are percentiles of e2e minus the
	// handler's run time, job by job: what the harness adds per job.
	OverheadP50Ns    float64 `json:"overhead_p50_ns"`
	OverheadP99Ns    float64 `json:"overhead_p99_ns"`
	DispatchP50Ns    float64 `json:"dispatch_p50_ns"`
	DispatchP99Ns    float64 `json:"dispatch_p99_ns"`
	BookkeepingP50Ns float64 `json:"bookkeeping_p50_ns"`
	BookkeepingP99Ns float64 `json:"bookkeeping_p99_ns"`
	CollectorTickNs  int64   `json:"collector_tick_mean_ns"`
	CompletedPerS    float64 `json:"completed_per_s"`
	// ClientCPUUsPerJob is the harness's CPU per job (HarnessCost)
	// and RunQueueWaitMsPerS its threads' wait for a CPU per second.
	ClientCPUUsPerJob  float64 `json:"client_cpu_us_per_job"`
	RunQueueWaitMsPerS float64 `json:"run_queue_wait_ms_per_s"`
	// ClosedLoop: the calibration ran closed loop, so its e2e includes
	// queueing behind the backlog and its CPU per job is at full speed.
	ClosedLoop bool `json:"closed_loop"`
}

// HarnessFloor is how far a run's tail is above the harness's own.
type HarnessFloor struct {
	// Ratio is the run's e2e minus handler p99 over the calibration's.
	Ratio float64 `json:"ratio"`
	// At: within 2x of the harness's own p99, so the harness, not the
	// store, may set this tail; read it as "at most this".
	At bool `json:"at_harness_floor"`
}

// AddRedis notes a server the plan used.
func (e *Environment) AddRedis(r RedisInfo) {
	if !slices.Contains(e.Redis, r) {
		e.Redis = append(e.Redis, r)
	}
}

// AddClient notes a client library the plan used.
func (e *Environment) AddClient(c string) {
	if !slices.Contains(e.Clients, c) {
		e.Clients = append(e.Clients, c)
	}
}

// Environment is where the numbers were taken.
type Environment struct {
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	Hostname  string `json:"hostname,omitempty"`
	// LoadAvgStart and LoadAvgEnd are the 1, 5 and 15 minute load averages
	// when the plan started and ended (/proc/loadavg; absent elsewhere):
	// what else ran on the machine explains noise no interval shows.
	LoadAvgStart []float64 `json:"load_avg_start,omitempty"`
	LoadAvgEnd   []float64 `json:"load_avg_end,omitempty"`
	// MemTotalBytes and MemAvailableBytes at the start (/proc/meminfo).
	MemTotalBytes     int64 `json:"mem_total_bytes,omitempty"`
	MemAvailableBytes int64 `json:"mem_available_bytes,omitempty"`
	// HarnessCPUs is the CPUs this process kept to when the plan gave
	// its Redis others (redis.cpus); empty: not pinned.
	HarnessCPUs string `json:"harness_cpus,omitempty"`
	// Modules: versions of the libraries that shape the numbers (go-redis,
	// rueidis, hdrhistogram-go, asynq), from the binary's build info.
	Modules     map[string]string `json:"modules,omitempty"`
	GitRevision string            `json:"git_revision"`
	GitDirty    bool              `json:"git_dirty"`
	// RevisionNote says why GitRevision is unknown: the binary carried no
	// stamp, and the checkout it ran in is named here, never taken for it.
	RevisionNote string      `json:"revision_note,omitempty"`
	Redis        []RedisInfo `json:"redis"`
	Clients      []string    `json:"clients"`
	// Note is the caveat every reader of these numbers needs.
	Note string `json:"note"`
}

// RedisInfo describes the server a run used.
type RedisInfo struct {
	Mode    string `json:"mode"`
	Version string `json:"version"`
	Cluster bool   `json:"cluster"`
	Masters int    `json:"masters"`
	// Owned: spawned by aebench, so it may be flushed between runs. A
	// server given by URL is never flushed.
	Owned bool `json:"owned"`
	// Meter is "instructions" when Redis ran under callgrind (its timings
	// distorted about fifty-fold), else empty.
	Meter string `json:"meter,omitempty"`
}

// ErrSchema reports a summary.json this version cannot read.
var ErrSchema = errors.New("unsupported summary.json schema")

// Read reads a summary.json of schema version 1 to SchemaVersion: the one
// decoder of the file, for compare, export, report and the lab procedures.
// The version is checked before the body, so a file of a newer schema
// fails on its version, not on a field it changed.
func Read(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var head struct {
		Schema int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a summary.json: %w", path, err)
	}
	if head.Schema < 1 || head.Schema > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this aebench reads 1 to %d: %w", path, head.Schema, SchemaVersion, ErrSchema)
	}
	var sum Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &sum, nil
}
