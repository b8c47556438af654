package summary

import "time"

// Drift is a long run's measured window cut into equal windows
// (drift.windows), and the verdict on the last against the first.
type Drift struct {
	WindowS  float64        `json:"window_s"`
	Windows  []DriftWindow  `json:"windows"`
	Verdicts []DriftVerdict `json:"verdicts"`
}

// DriftWindow is one window's figures.
type DriftWindow struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// Completed counts the jobs completed in the window.
	Completed int64 `json:"completed"`
	// UsedBytes is Redis's used_memory (mean over the window's seconds),
	// HeldJobs the jobs the store held (mean: backlog, in flight, and the
	// jobs finished within store.retention), MemPerJobBytes the used
	// memory above the run's baseline per job held.
	UsedBytes      float64 `json:"used_bytes"`
	HeldJobs       float64 `json:"held_jobs"`
	MemPerJobBytes float64 `json:"mem_per_job_bytes"`
	// Fragmentation is used_memory_rss / used_memory (mean).
	Fragmentation float64 `json:"fragmentation"`
	// Redis's CPU and commands per job completed in the window.
	RedisCPUPerJobUs float64 `json:"redis_cpu_us_per_job"`
	CommandsPerJob   float64 `json:"commands_per_job"`
	// E2EP99Ms and QueueWaitP99Ms are the window's p99s (0: no sample).
	E2EP99Ms       float64 `json:"e2e_p99_ms"`
	QueueWaitP99Ms float64 `json:"queue_wait_p99_ms"`
}

// DriftVerdict compares one metric's last window with its first.
type DriftVerdict struct {
	Metric string  `json:"metric"`
	First  float64 `json:"first"`
	Last   float64 `json:"last"`
	// Ratio is Last / First; Lo and Hi the 95% interval of the ratio the
	// least-squares trend across the windows projects over the run.
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Word is holds, drifts or unclear (DriftThreshold).
	Word string `json:"word"`
}

// DriftThreshold is the ratio of the last window to the first above which
// a metric drifts: the ratio over it and the trend's interval above 1.
// A metric holds when the interval stays under it.
const DriftThreshold = 1.25

// SnapshotCheck sets a Redis restart's losses under RDB persistence beside
// what the last snapshot before the kill could hold: the dataset as of its
// fork, known to within the fork window (a 50ms poll of INFO persistence;
// before any snapshot, the run's start).
type SnapshotCheck struct {
	ForkLo time.Time `json:"fork_lo"`
	ForkHi time.Time `json:"fork_hi"`
	KillAt time.Time `json:"kill_at"`
	// SinceSnapshotS is the time from the fork to the kill.
	SinceSnapshotS float64 `json:"since_snapshot_s"`
	// AckedAfter counts the acknowledged jobs whose Enqueue started after
	// the fork and that were still open at the kill: what the promise
	// says the restart loses. Window counts those whose Enqueue started
	// within the fork window (widened 100ms back): in the snapshot or not.
	AckedAfter int64 `json:"acked_after_snapshot"`
	Window     int64 `json:"fork_window_jobs"`
	// Lost is the ledger's lost; Matches: AckedAfter <= Lost <=
	// AckedAfter + Window.
	Lost    int64 `json:"lost"`
	Matches bool  `json:"matches"`
}
