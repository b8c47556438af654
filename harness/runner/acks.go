package runner

import (
	"fmt"
	"io"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// ackTable prints, when a run batched its acks (workers.ack_batch > 1),
// what the batching added to e2e: the ack wait (handler end -> Complete
// acknowledged) next to the Complete call and e2e, and jobs per call.
func ackTable(w io.Writer, runs []summary.RunSummary, repeats int) {
	batched := false
	for _, r := range runs {
		batched = batched || r.Config.Workers.AckBatch > 1
	}
	if !batched {
		return
	}
	var rows [][]string
	for _, r := range runs {
		lat := func(tag, q string) string {
			if m, ok := r.LatencyNs[tag]; ok {
				return fmtNs(m[q])
			}
			return "-"
		}
		perCall := "-"
		if c := r.Counters; c.CompleteCalls > 0 {
			perCall = fmt.Sprintf("%.1f", float64(c.Completed)/float64(c.CompleteCalls))
		}
		wc := r.Config.Workers
		rows = append(rows, []string{runName(r, repeats), fmt.Sprint(wc.AckBatch), wc.AckInterval.String(), perCall,
			lat("ack_wait", "p50"), lat("ack_wait", "p99"), lat("complete", "p50"), lat("complete", "p99"),
			lat("e2e", "p50"), lat("e2e", "p99")})
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "acks: ack wait = handler end -> its Complete acknowledged (batch fill + the call): what ack batching adds to e2e; complete = one call (a whole batch when ack batch > 1)")
	_ = report.Table(w, []string{"backend", "ack batch", "interval", "jobs/call", "ack wait p50", "ack wait p99",
		"complete p50", "complete p99", "e2e p50", "e2e p99"}, rows)
}
