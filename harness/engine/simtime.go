package engine

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/hist"
)

// simulated restates a result measured on the wall clock in the simulated
// time it stands for, speed times as fast: the window and the time series
// stretch, rates shrink, the ledger's early margins and the recovery
// distribution stretch. The histograms are already simulated (Recorder).
// The harness's own costs (collector ticks, CPU per job, the prefill's
// load time) and Redis's cost per job stay as measured.
func (r *Result) simulated(speed float64) {
	if speed <= 1 {
		return
	}
	r.Window.WarmupS *= speed
	r.Window.MeasuredS *= speed
	r.Window.DrainS *= speed
	r.Throughput.Offered /= speed
	r.Throughput.Enqueued /= speed
	r.Throughput.Completed /= speed
	for i := range r.Series {
		r.Series[i].Second = int(math.Round(float64(r.Series[i].Second) * speed))
	}
	r.Ledger.MaxEarlyNs = int64(float64(r.Ledger.MaxEarlyNs) * speed)
}

// timedFaults dates each fault from the run's start as well (warm-up, a
// real duration, added to the window-relative time) and restates what the
// fault tracker measured on the wall clock (when each fault landed, the
// recovery distribution and each fault's slowest recovery) in the run's
// time base: simulated time, speed times as fast, on a simulated run.
func timedFaults(sum *faults.Summary, h *hdr.Histogram, warmup time.Duration, speed float64) *hdr.Histogram {
	for i := range sum.Records {
		r := &sum.Records[i]
		r.RunAtS = r.AtS + warmup.Seconds()
	}
	if speed <= 1 {
		return h
	}
	for i := range sum.Records {
		r := &sum.Records[i]
		r.AtS *= speed
		r.RunAtS *= speed
		r.PlannedS *= speed
		r.RecoveryMaxNs = int64(float64(r.RecoveryMaxNs) * speed)
	}
	for k, v := range sum.RecoveryNs {
		if k != "count" { // a count of recoveries, not a duration
			sum.RecoveryNs[k] = v * speed
		}
	}
	return hist.Stretch(h, speed)
}
