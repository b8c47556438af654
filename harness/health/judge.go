package health

import (
	"fmt"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

// The thresholds of a healthy run, set from make bench (scenarios/quick.yaml,
// four stores and a calibration at 1500 jobs/s) on a 2-core VM, once on a
// quiet machine and once beside a busy loop on three threads
// (docs/harness.md, "Measurement health"):
//
//	                                   quiet            loaded
//	run-queue wait, store runs (ms/s)  283-350          949-1204
//	run-queue wait, calibration        69               367
//	calibration's harness p99 (e2e     112µs            3.83ms
//	  minus handler, job by job)
//	schedule lag p99, zset/bucket/dual 0.5-0.7ms        7-17ms
//	collector tick max                 13-27ms          37-62ms
//
// Each threshold sits between the two; the schedule lag's and the
// collector's are the loaded runs' worst with room, so a run past them
// has lost more than a loaded machine takes.
const (
	// RunQueueWaitMsPerS: the harness's threads waited this long for a CPU
	// per second: the machine, not the store, may set the tail.
	RunQueueWaitMsPerS = 600
	// CalibrationP99: the harness alone (the cell's null calibration run)
	// added this much at p99: every run of the cell shares that machine.
	CalibrationP99 = time.Millisecond
	// ScheduleLagP99: the producers started their calls this late after
	// their plan (p99): open-loop latency counts from the plan, so the
	// harness, not the store, added it.
	ScheduleLagP99 = 25 * time.Millisecond
	// CollectorTickMax: one collector tick took this long, so the
	// per-second series smeared across seconds.
	CollectorTickMax = 250 * time.Millisecond
	// HostStealPercent: the hypervisor gave this share of the machine's
	// CPU time to other guests. Not from make bench: on this VM steal was
	// 0.3% quiet and 1-5% with every core busy (2026-11-29), so a tenth of
	// the machine taken is well past a busy guest's own share.
	HostStealPercent = 10
)

// Judge is a run's health from the figures the harness took of itself
// (harness, latency: the run's summary figures; stallNote its stall note
// on simulated time; callEvery how often each producer means to call
// Enqueue in an open loop, 0 in a closed one; speed the run's time speed:
// latencies are in the run's time base, the thresholds in real time).
//
// The producers' lateness is the machine's only when their Enqueue calls
// were quick: a producer whose calls take half its interval or more falls
// behind because the store is slow to take jobs (a saturated Redis), and
// open-loop latency rightly charges that to the store.
func Judge(h summary.HarnessCost, latency map[string]map[string]float64, stallNote string, callEvery time.Duration, speed float64) *summary.Health {
	speed = max(speed, 1)
	out := &summary.Health{Status: summary.Healthy, RunQueueWaitMsPerS: h.RunQueueWaitMsPerS,
		ScheduleLagP99Ns: latency["schedule_lag"]["p99"], CollectorTickMaxNs: h.CollectorTickMaxNs, HostStealPercent: h.HostStealPercent}
	if h.RunQueueWaitMsPerS > RunQueueWaitMsPerS {
		out.Suspect(fmt.Sprintf("its threads waited %.0f ms/s for a CPU (healthy: at most %d)", h.RunQueueWaitMsPerS, RunQueueWaitMsPerS))
	}
	if h.HostStealPercent > HostStealPercent {
		out.Suspect(fmt.Sprintf("the hypervisor took %.0f%% of the machine's CPU time (steal; healthy: at most %d%%)", h.HostStealPercent, HostStealPercent))
	}
	storeBound := callEvery > 0 && latency["enqueue"]["mean"] >= float64(callEvery)/2
	if lag := out.ScheduleLagP99Ns / speed; lag > float64(ScheduleLagP99) && !storeBound {
		out.Suspect(fmt.Sprintf("producers started %s (real) late at p99 against their plan (healthy: at most %s)", fmtNs(lag), ScheduleLagP99))
	}
	if t := time.Duration(h.CollectorTickMaxNs); t > CollectorTickMax {
		out.Suspect(fmt.Sprintf("a collector tick took %s (healthy: at most %s)", t.Round(time.Millisecond), CollectorTickMax))
	}
	if stallNote != "" {
		out.Suspect(stallNote)
	}
	return out
}

// JudgeCalibration marks every run of a cell whose calibration run (the
// harness alone, calP99 its e2e minus handler p99) shows a slow machine.
func JudgeCalibration(h *summary.Health, calP99 float64) {
	if h == nil || calP99 <= float64(CalibrationP99) {
		return
	}
	h.CalibrationP99Ns = calP99
	h.Suspect(fmt.Sprintf("the harness alone (the cell's calibration) added %s at p99 (healthy: at most %s)", fmtNs(calP99), CalibrationP99))
}

func fmtNs(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
