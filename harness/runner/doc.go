// Package harness is aebench's load harness: it parses scenario files into a
// matrix of runs, drives any registered job store with open- or closed-loop
// producers and concurrent workers, measures honestly (HdrHistograms per
// goroutine in ns, open-loop latency from the planned time, warm-up
// excluded, a bounded drain), checks every job with a Jepsen-style ledger,
// takes Redis's cost per job from INFO deltas, and writes summary.json,
// .hlog/.hgrm files, a time series, plots and a comparison table.
//
// Dependencies flow one way: the CLI (cmd/aebench) calls this package, which
// uses the jobstore contract, backends/registry, rclient, redisserver,
// rediscost and report; no backend imports it. Workers report job events
// through the Events interface so that, later, worker processes elsewhere
// can feed the same Ledger.
//
// The harness measures itself too: the null backend (an in-process queue,
// not a job store) runs first in each matrix cell as a calibration, and
// every run records claim-to-handler dispatch and per-job bookkeeping.
package runner
