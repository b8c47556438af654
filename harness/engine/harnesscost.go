package engine

import (
	"context"
	"runtime/metrics"
	"time"
)

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
	// ClientFixedUsPerS is this process's CPU per second with no job left:
	// the collector, the status line and idle workers, measured for
	// idleProbe after an open-loop run's drain. ClientPerJobUs is the rest
	// of the window's CPU per job (ClientCPUUsPerJob less the fixed part
	// spread over the window's jobs): at a low rate the fixed part is most
	// of ClientCPUUsPerJob, and this says what a job itself costs.
	ClientFixedUsPerS float64 `json:"client_fixed_us_per_s,omitempty"`
	ClientPerJobUs    float64 `json:"client_per_job_us,omitempty"`
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

// windowUsage samples this process's CPU time and run-queue wait at the
// start of the measured window, to be divided over it at the end.
type windowUsage struct {
	cpu, wait          time.Duration
	cpuOK, waitOK      bool
	allocs, allocBytes uint64 // heap allocations since the process started
}

func sampleUsage() windowUsage {
	var u windowUsage
	u.cpu, u.cpuOK = processCPU()
	u.wait, u.waitOK = runQueueWait()
	s := []metrics.Sample{{Name: metricAllocs}, {Name: metricAllocBytes}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		u.allocs, u.allocBytes = s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	return u
}

// since fills h with what was used since u, over jobs completed in
// window, and returns the window's CPU (0 when unknown).
func (u windowUsage) since(h *HarnessCost, jobs int64, window time.Duration) time.Duration {
	now := sampleUsage()
	var cpu time.Duration
	if u.cpuOK && now.cpuOK && jobs > 0 {
		cpu = now.cpu - u.cpu
		h.ClientCPUUsPerJob = float64(cpu) / 1e3 / float64(jobs)
	}
	if u.waitOK && now.waitOK && window > 0 {
		h.RunQueueWaitMsPerS = float64(now.wait-u.wait) / 1e6 / window.Seconds()
	}
	if jobs > 0 && now.allocs >= u.allocs {
		h.ClientAllocsPerJob = float64(now.allocs-u.allocs) / float64(jobs)
		h.ClientAllocBytesPerJob = float64(now.allocBytes-u.allocBytes) / float64(jobs)
	}
	return cpu
}

// probeIdle measures ClientFixedUsPerS and, from the window's CPU,
// ClientPerJobUs.
func (e *engine) probeIdle(ctx context.Context) {
	u, start := sampleUsage(), time.Now()
	t := time.NewTimer(idleProbe)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	now := sampleUsage()
	if !u.cpuOK || !now.cpuOK {
		return
	}
	fixed := float64(now.cpu-u.cpu) / 1e3 / time.Since(start).Seconds()
	e.usage.ClientFixedUsPerS = fixed
	if e.window.jobs > 0 && e.window.cpu > 0 {
		perJob := (float64(e.window.cpu)/1e3 - fixed*e.window.length.Seconds()) / float64(e.window.jobs)
		e.usage.ClientPerJobUs = max(perJob, 0)
	}
}
