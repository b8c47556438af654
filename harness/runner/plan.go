package runner

import (
	"context"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/scenario"
)

// The parts of a plan's wall time beyond its runs' warm-ups and measured
// windows, fitted on the 2-core VM to make bench (quick.yaml: 81 s
// measured, 53 s of windows; estimated 73 s) and capacity.yaml (96 runs
// of 2 s, 8 cells: 300.6 s measured; estimated 325 s):
const (
	// runSetup: per run, flushing the server, building the stores, the
	// cost meter's marks and the idle probe after an open-loop drain.
	runSetup = 700 * time.Millisecond
	// drainSlack: what a drain takes beyond the last job's due time.
	drainSlack = 500 * time.Millisecond
	// planSetup: the environment, the first Redis and the preflight.
	planSetup = 2 * time.Second
	// cellPlots: a cell's PNG and SVG plots.
	cellPlots = 2 * time.Second
	// meteredProbe: per run under callgrind (redis.meter instructions), the
	// path probe's windows after it (scenarios/ci-cost.yaml: 261 s
	// measured for 8 runs, 222 s estimated without it).
	meteredProbe = 5 * time.Second
)

// Estimate is the wall time a run of s is expected to take: each run's
// warm-up and window (real time on a simulated run), its drain as far as
// its conditions make one (the longest handler, the latest delay, a lease
// and a recovery pass after faults; never beyond drain), and the set-up
// and plotting around them. It runs nothing. A prefilled backlog's load
// is not in it (its speed is Redis's).
func Estimate(s *scenario.Scenario, noPlots bool) time.Duration {
	total := planSetup
	probed := map[capacityKey]bool{}
	for _, r := range s.Runs() {
		total += runEstimate(r)
		if k := (capacityKey{r.Cell, r.Config.Backend.Label}); r.Config.CapacityPending() && !probed[k] {
			// The capacity probe: its warm-up, window, a drain of what its
			// closed loop left (at most its backlog bound) and its set-up.
			probed[k] = true
			total += probeWarmup + r.Config.Producers.CapacityProbe + drainSlack + runSetup
		}
	}
	if !noPlots {
		total += time.Duration(len(s.Cells)) * cellPlots
	}
	return total
}

// runEstimate is one run's expected wall time.
func runEstimate(r conditions.RunSpec) time.Duration {
	c := r.Config.RealTime()
	drain := drainSlack
	if b, _ := c.Workers.Handler.Bound(); b > 0 {
		drain += b
	}
	if c.Producers.Delayed > 0 {
		if b, _ := c.Producers.Delay.Bound(); b > drain {
			drain = b + drainSlack
		}
	}
	if len(c.Faults) > 0 {
		drain = max(drain, c.Workers.Lease+c.Workers.RecoveryInterval+drainSlack)
	}
	d := c.Warmup + c.Duration + min(drain, c.Drain) + runSetup
	if c.Redis.Metered() && !r.Calibration {
		d += meteredProbe
	}
	return d
}

// Preflight makes the checks a run makes before its first run without
// measuring anything: it starts or reaches each Redis the plan uses, asks
// a server given by URL what it refuses (aebench doctor), and builds each
// backend with its options (on a private server for a URL), so a wrong
// option fails here. It writes no results.
func Preflight(ctx context.Context, s *scenario.Scenario, o Options) error {
	o = o.withDefaults()
	pr := &planRunner{s: s, o: o, pool: newRedisPool(o.Logf)}
	defer pr.pool.close()
	return pr.prepare(ctx, s.Runs())
}
