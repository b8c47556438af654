package summary

import "github.com/aebench/aebench/harness/ledger"

// MixResult is a run's jobs split by kind, tenant and failure window
// (jobs:, failure_windows:), from the ledger after the run.
type MixResult struct {
	Kinds []GroupResult `json:"kinds,omitempty"`
	// Queues: one per queue of store.queues, in priority order, under
	// QueuePolicy (Weight set).
	Queues      []GroupResult   `json:"queues,omitempty"`
	QueuePolicy string          `json:"queue_policy,omitempty"`
	Tenants     *TenantFairness `json:"tenants,omitempty"`
	Storm       *StormResult    `json:"storm,omitempty"`
}

// GroupResult is one class of the run's jobs: the ledger's judgement of
// every job of it (warm-up included) and the latencies of its measured
// jobs: e2e (immediate jobs completed with no retry), queue_wait (the
// first attempt's, immediate jobs) and lateness (a delayed job's first
// start after its RunAt), each p50, p95, p99, max and count, at two
// significant digits.
type GroupResult struct {
	Name         string  `json:"name"`
	FailClass    string  `json:"fail_class,omitempty"`
	OfferedShare float64 `json:"offered_share,omitempty"`
	Weight       int     `json:"weight,omitempty"`
	Planned      int64   `json:"planned"`
	Completed    int64   `json:"completed"`
	// CompletedInWindow: completed by the measured window's end.
	CompletedInWindow    int64                         `json:"completed_in_window"`
	DeadLettered         int64                         `json:"dead_lettered"`
	Retries              int64                         `json:"retries"`
	DuplicateCompletions int64                         `json:"duplicate_completions"`
	Jobs                 ledger.Tally                  `json:"jobs"`
	LatencyNs            map[string]map[string]float64 `json:"latency_ns,omitempty"`
	// WaitMaxMsBySecond (queues only): the longest first-attempt queue-wait
	// among the attempts that started in each second of the run, from its
	// start (-1: none started): how starvation grows and ends.
	WaitMaxMsBySecond []float64 `json:"wait_max_ms_by_second,omitempty"`
}

// TenantFairness is how the run treated its tenants: the noisiest (t0,
// the one with the largest offered share) against the others pooled, and
// each tenant's throughput against what it offered.
type TenantFairness struct {
	Count int         `json:"count"`
	Noisy GroupResult `json:"noisy"`
	Quiet GroupResult `json:"quiet"`
	// NoisyQuietP95 is the noisy tenant's e2e p95 over the quiet
	// tenants' (pooled); QuietNoisyP95 its inverse: above 1, the quiet
	// tenants wait longer than the one flooding the queue.
	NoisyQuietP95 float64 `json:"noisy_quiet_p95,omitempty"`
	QuietNoisyP95 float64 `json:"quiet_noisy_p95,omitempty"`
	// Jain is Jain's fairness index over the tenants' normalised
	// throughput (jobs completed in the window over jobs planned): 1 when
	// every tenant got the same share of what it asked for, 1/n at worst.
	Jain float64 `json:"jain"`
	// MinShare and MaxShare: the lowest and highest of the tenants'
	// throughput share over their offered share.
	MinShare float64 `json:"min_share"`
	MaxShare float64 `json:"max_share"`
	// Tenants lists the first TenantsListed tenants (t0 first: the
	// heaviest under zipf and noisy).
	Tenants []TenantShare `json:"tenants"`
}

// TenantsListed bounds TenantFairness.Tenants.
const TenantsListed = 100

// TenantShare is one tenant's share of the run.
type TenantShare struct {
	Tenant            string  `json:"tenant"`
	OfferedShare      float64 `json:"offered_share"`
	Planned           int64   `json:"planned"`
	CompletedInWindow int64   `json:"completed_in_window"`
	// ShareRatio: its share of the jobs completed in the window over its
	// share of the jobs planned.
	ShareRatio float64 `json:"share_ratio"`
	E2EP95Ns   float64 `json:"e2e_p95_ns,omitempty"`
	// The ledger's judgement of the tenant's jobs.
	Lost         int64 `json:"lost"`
	Duplicated   int64 `json:"duplicated_executions"`
	StartedEarly int64 `json:"started_early"`
}

// StormResult is the jobs intended before, during and after the failure
// windows, and what the storm cost the first attempts.
type StormResult struct {
	Windows []string    `json:"windows"`
	Before  GroupResult `json:"before"`
	During  GroupResult `json:"during"`
	After   GroupResult `json:"after"`
	// FirstAttemptP99Ratio: the first attempts' queue-wait p99 during the
	// windows over before them (0: either side had none).
	FirstAttemptP99Ratio float64 `json:"first_attempt_p99_ratio,omitempty"`
}
