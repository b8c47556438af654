package engine

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

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
func (u windowUsage) since(h *summary.HarnessCost, jobs int64, window time.Duration) time.Duration {
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
