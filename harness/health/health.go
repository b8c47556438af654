// Package health measures the harness process itself while a run runs:
// its CPU time, its threads' wait for a CPU (the run-queue wait of
// /proc/self/task/*/schedstat), the CPU time a hypervisor took from the
// machine (/proc/stat's steal), its heap allocations, and its stalls (a
// 1 ms sleep loop's worst oversleep, as jHiccup measures). These are what
// say a starved machine, not the store, set a run's numbers; the engine
// samples them at the window's edges and writes them into the record
// (summary.HarnessCost).
package health

import (
	"runtime/metrics"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

// The runtime/metrics read for allocations: cumulative counts, so a
// window's are the difference of two reads.
const (
	metricAllocs     = "/gc/heap/allocs:objects"
	metricAllocBytes = "/gc/heap/allocs:bytes"
)

// Usage is this process's CPU time and run-queue wait, and the machine's
// steal, at the start of the measured window, to be divided over it at
// the end.
type Usage struct {
	cpu, wait, steal       time.Duration
	cpuOK, waitOK, stealOK bool
	cpus                   int    // the CPUs steal is summed over
	allocs, allocBytes     uint64 // heap allocations since the process started
}

func Sample() Usage {
	var u Usage
	u.cpu, u.cpuOK = CPU()
	u.wait, u.waitOK = RunQueueWait()
	u.steal, u.cpus, u.stealOK = Steal()
	s := []metrics.Sample{{Name: metricAllocs}, {Name: metricAllocBytes}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		u.allocs, u.allocBytes = s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	return u
}

// Since fills h with what was used since u, over jobs completed in
// window, and returns the window's CPU (0 when unknown).
func (u Usage) Since(h *summary.HarnessCost, jobs int64, window time.Duration) time.Duration {
	now := Sample()
	var cpu time.Duration
	if u.cpuOK && now.cpuOK && jobs > 0 {
		cpu = now.cpu - u.cpu
		h.ClientCPUUsPerJob = float64(cpu) / 1e3 / float64(jobs)
	}
	if u.waitOK && now.waitOK && window > 0 {
		h.RunQueueWaitMsPerS = float64(now.wait-u.wait) / 1e6 / window.Seconds()
	}
	if u.stealOK && now.stealOK && window > 0 && u.cpus > 0 {
		h.HostStealPercent = 100 * float64(now.steal-u.steal) / float64(window) / float64(u.cpus)
	}
	if jobs > 0 && now.allocs >= u.allocs {
		h.ClientAllocsPerJob = float64(now.allocs-u.allocs) / float64(jobs)
		h.ClientAllocBytesPerJob = float64(now.allocBytes-u.allocBytes) / float64(jobs)
	}
	return cpu
}

// CPUSince is this process's CPU time from earlier to u; false when either
// sample could not read it.
func (u Usage) CPUSince(earlier Usage) (time.Duration, bool) {
	return u.cpu - earlier.cpu, u.cpuOK && earlier.cpuOK
}
