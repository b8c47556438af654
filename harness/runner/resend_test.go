package runner

import (
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

// TestResend: producers.resend sends a share of enqueues twice; every
// strategy refuses the second (ErrDuplicateID) and runs each job once.
func TestResend(t *testing.T) {
	const src = `
name: resend-test
duration: 1s
warmup: 200ms
drain: 5s
calibration: off
store: {poll_interval: 20ms}
producers: {rate: 200, resend: 0.3}
workers: {count: 2, concurrency: 4, claim_wait: 100ms, handler: 1ms}
backends: [zset, stream, bucket, dual]
`
	out := runScenario(t, "resend.yaml", src)
	for _, r := range out.Summary.Runs {
		l, c := r.Ledger, r.Counters
		if r.Status != summary.StatusOK || l.Lost != 0 || l.DuplicatedExecutions != 0 || c.Resent == 0 || c.ResendRefused != c.Resent {
			t.Errorf("%s: status %s, lost %d, duplicated %d, resent %d, refused %d; problems %v", r.ID, r.Status,
				l.Lost, l.DuplicatedExecutions, c.Resent, c.ResendRefused, r.Problems)
		}
	}
}
