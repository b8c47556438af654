package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/redisserver"
)

// TestAckBatch runs batched acks (workers.ack_batch 10) on a spawned Redis,
// one worker in process and one as a worker process, on stores with
// CompleteMany and on asynq (one Complete per lease): every job completes,
// none is lost, the acks went out in batches and the ack wait is measured.
func TestAckBatch(t *testing.T) {
	const src = `
name: ack-batch-test
duration: 1s
warmup: 200ms
drain: 10s
calibration: off
store: {poll_interval: 20ms}
producers: {rate: 1000}
workers: {count: 2, processes: 1, concurrency: 8, claim_batch: 4, claim_wait: 100ms, handler: 200us, ack_batch: 10, ack_interval: 2ms}
backends: [zset, stream, bucket, dual, floor, asynq]
`
	out := runScenario(t, "ack-batch.yaml", src)
	if len(out.Summary.Runs) != 6 {
		t.Fatalf("%d runs, want 6", len(out.Summary.Runs))
	}
	for _, r := range out.Summary.Runs {
		l, c := r.Ledger, r.Counters
		if r.Status != summary.StatusOK || l.Lost != 0 || l.Completed != l.Acknowledged || l.Acknowledged == 0 {
			t.Errorf("%s: status %s, acknowledged %d completed %d lost %d; problems %v", r.ID, r.Status,
				l.Acknowledged, l.Completed, l.Lost, r.Problems)
		}
		t.Logf("%s: completed %d in %d ack calls, ack wait p50 %.0fµs p99 %.0fµs", r.ID, c.Completed, c.CompleteCalls, r.LatencyNs["ack_wait"]["p50"]/1e3, r.LatencyNs["ack_wait"]["p99"]/1e3)
		// At 1000 jobs/s and a 2ms interval, a batch holds about 2 jobs per worker.
		if c.CompleteCalls == 0 || c.CompleteCalls*3 > c.Completed*2 {
			t.Errorf("%s: %d complete calls for %d completions: acks not batched", r.ID, c.CompleteCalls, c.Completed)
		}
		if aw := r.LatencyNs["ack_wait"]; aw["count"] == 0 {
			t.Errorf("%s: no ack_wait histogram", r.ID)
		}
		if want := "ack batch 10 interval 2ms"; !contains(r.Conditions, want) {
			t.Errorf("%s: conditions %q lack %q", r.ID, r.Conditions, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestAckBatchCrash crashes workers that hold batched acks (in process and
// a SIGKILLed worker process): nothing is lost, and the jobs whose acks
// landed as their worker died are read back, so the drain finishes.
func TestAckBatchCrash(t *testing.T) {
	const src = `
name: ack-batch-crash-test
duration: 1500ms
warmup: 100ms
drain: 10s
calibration: off
store: {poll_interval: 20ms}
producers: {rate: 300}
workers: {count: 3, processes: 1, concurrency: 4, claim_wait: 100ms, handler: "uniform(1ms, 5ms)", lease: 500ms,
  recovery_mode: lease, recovery_interval: 100ms, ack_batch: 10, ack_interval: 20ms}
faults:
  - {kind: worker_crash, point: after_handler, at: 400ms, worker: 0, replace_after: 100ms}
  - {kind: worker_crash, point: in_handler, at: 700ms, worker: 1, replace_after: 100ms}
  - {kind: worker_kill, point: random, at: 1s, replace_after: 100ms}
backends: [zset, dual]
`
	out := runScenario(t, "ack-batch-crash.yaml", src)
	for _, r := range out.Summary.Runs {
		l := r.Ledger
		if r.Status != summary.StatusOK || l.Lost != 0 || !r.Window.Drained || r.Recovery == nil || r.Recovery.Landed == 0 {
			t.Errorf("%s: status %s, lost %d, drained %v, recovery %+v; problems %v", r.ID, r.Status, l.Lost,
				r.Window.Drained, r.Recovery, r.Problems)
		}
	}
}

// runScenario runs a scenario given as YAML; no Redis skips the test.
func runScenario(t *testing.T, file, src string) *Outcome {
	t.Helper()
	s, err := scenario.ParseScenario(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: true})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
