package engine

import (
	"context"
	"time"

	"github.com/aebench/aebench/harness/health"
)

// probeIdle measures ClientFixedUsPerS and, from the window's CPU,
// ClientPerJobUs.
func (e *engine) probeIdle(ctx context.Context) {
	u, start := health.Sample(), time.Now()
	t := time.NewTimer(idleProbe)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	cpu, ok := health.Sample().CPUSince(u)
	if !ok {
		return
	}
	fixed := float64(cpu) / 1e3 / time.Since(start).Seconds()
	e.usage.ClientFixedUsPerS = fixed
	if e.window.jobs > 0 && e.window.cpu > 0 {
		perJob := (float64(e.window.cpu)/1e3 - fixed*e.window.length.Seconds()) / float64(e.window.jobs)
		e.usage.ClientPerJobUs = max(perJob, 0)
	}
}
