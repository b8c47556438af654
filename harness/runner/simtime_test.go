package runner

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/redisserver"
)

// TestSimulatedTimeAgrees runs one short scenario at speed 1 and at speed
// 20 of simulated time (a matrix over time.speed) and finds the lateness of
// delayed jobs and the recovery of crashed workers' jobs alike within the
// resolution of the faster run (1 real ms = 20 simulated ms): what a store
// decides on its clock must not depend on how fast that clock runs.
func TestSimulatedTimeAgrees(t *testing.T) {
	const src = `
name: simtime-test
seed: 7
duration: 4s
warmup: 500ms
drain: 10s
calibration: off
time: {base: simulated, speed: [1, 20]}
redis: {mode: embedded, hz: 100}
backends: [zset]
producers: {rate: 40, delayed: 0.5, delay: "uniform(200ms, 1s)"}
workers: {count: 2, concurrency: 8, claim_wait: 1s, handler: "uniform(20ms, 100ms)", lease: 1s, recovery_interval: 500ms}
faults:
  - {kind: worker_crash, point: in_handler, at: [1500ms, 3s]}
`
	s, err := scenario.ParseScenario("simtime.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Stdout: &out, GitDir: ".."})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis: %v", err)
	}
	if err != nil || len(outcome.Failed)+len(outcome.Errored) > 0 {
		t.Fatalf("Run: %v failed %v errored %v\n%s", err, outcome.Failed, outcome.Errored, out.String())
	}
	t.Log(out.String())
	data, err := os.ReadFile(filepath.Join(outcome.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum summary.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) != 2 {
		t.Fatalf("%d runs, want 2 (speed 1 and 20)", len(sum.Runs))
	}
	const res = 20 * time.Millisecond // the speed-20 run's resolution
	ms := func(v float64) time.Duration { return time.Duration(v) }
	at := map[float64]summary.RunSummary{}
	for _, r := range sum.Runs {
		at[r.Config.Speed()] = r
		if r.Status != summary.StatusOK || r.Ledger.Lost != 0 || r.Ledger.StartedEarly != 0 || r.Recovery == nil || r.Recovery.Restarted == 0 {
			t.Fatalf("speed %g: status %s ledger %+v recovery %+v", r.Config.Speed(), r.Status, r.Ledger, r.Recovery)
		}
		// Every crashed job is back after its lease and at most one
		// recovery interval, within the resolution.
		lo, hi := ms(r.Recovery.RecoveryNs["p50"]), ms(r.Recovery.RecoveryNs["max"])
		if lo < time.Second-res || hi > 1500*time.Millisecond+3*res {
			t.Errorf("speed %g: recovery p50 %v max %v, want within [1s, 1.5s] give or take %v", r.Config.Speed(), lo, hi, res)
		}
	}
	real, fast := at[1], at[20]
	if fast.Config.Resolution() != res || !strings.Contains(fast.Conditions, "1 real ms = 20ms simulated") {
		t.Errorf("speed 20: resolution %v, conditions %q", fast.Config.Resolution(), fast.Conditions)
	}
	for _, q := range []string{"p50", "p90"} {
		a, b := ms(real.LatencyNs["lateness"][q]), ms(fast.LatencyNs["lateness"][q])
		if math.Abs(float64(a-b)) > float64(3*res) {
			t.Errorf("lateness %s: %v at speed 1, %v at speed 20: apart by more than 3 x %v", q, a, b, res)
		}
	}
	// The simulated run's rate is the scenario's, not the wall clock's.
	if got := fast.Throughput.Completed; got < 30 || got > 50 {
		t.Errorf("speed 20: %.1f jobs/s completed, want about 40 (simulated seconds)", got)
	}
}
