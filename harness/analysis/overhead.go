package analysis

import "github.com/aebench/aebench/harness/summary"

func OverheadSummary(sum *summary.Summary) *summary.Overhead {
	o := &summary.Overhead{Method: "a null-backend calibration run per matrix cell (in-process queue with blocking claim, " +
		"same load): its e2e minus each job's handler time (histogram e2e_minus_handler) is what the harness adds per job; every run also records " +
		"dispatch (Claim returned -> handler started) and bookkeeping (ledger and histogram work per job)"}
	for _, r := range sum.Runs {
		if !r.Calibration {
			continue
		}
		lat := func(tag, q string) float64 { return r.LatencyNs[tag][q] }
		o.Calibration = append(o.Calibration, summary.CalibrationInfo{RunID: r.ID, Cell: r.Cell,
			E2EP50Ns: lat("e2e", "p50"), E2EP99Ns: lat("e2e", "p99"),
			HandlerP50Ns: lat("handler", "p50"), HandlerP99Ns: lat("handler", "p99"),
			OverheadP50Ns: lat("e2e_minus_handler", "p50"), OverheadP99Ns: lat("e2e_minus_handler", "p99"),
			DispatchP50Ns: lat("dispatch", "p50"), DispatchP99Ns: lat("dispatch", "p99"),
			BookkeepingP50Ns: lat("bookkeeping", "p50"), BookkeepingP99Ns: lat("bookkeeping", "p99"),
			CollectorTickNs: r.Harness.CollectorTickMeanNs, CompletedPerS: r.Throughput.Completed,
			ClientCPUUsPerJob: r.Harness.ClientCPUUsPerJob, RunQueueWaitMsPerS: r.Harness.RunQueueWaitMsPerS,
			ClosedLoop: r.Config.Producers.Mode != "open"})
	}
	return o
}
