package runner

import (
	"os"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/rediscost"
)

// TestInstructionsMeter runs a tiny zset scenario on a Redis under
// callgrind (redis.meter instructions) and checks that instructions per
// job, in all and by command, reach the summary and its table, and that
// the conditions say the timings are distorted. Without valgrind it skips
// with the reason, except under CI, which installs it (.ci/run).
func TestInstructionsMeter(t *testing.T) {
	if err := rediscost.CheckValgrind(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("under CI valgrind must be installed (.ci/run): %v", err)
		}
		t.Skip(err)
	}
	outcome, out := runScenarioText(t, "meter.yaml", `
name: meter
duration: 2s
warmup: 1s
drain: 20s
calibration: off
redis: {mode: embedded, meter: instructions}
backends: [zset]
producers: {rate: 40, delayed: 0.1, delay: "uniform(20ms, 100ms)"}
workers: {count: 2, concurrency: 2, handler: "constant(1ms)"}
`)
	r := outcome.Summary.Runs[0]
	c := r.Cost
	if c == nil || c.Instructions <= 0 || c.CommandInstructions <= 0 || c.CommandInstructions > c.Instructions {
		t.Fatalf("instructions not measured: %+v\n%s", c, out)
	}
	if c.InstructionsByCommand["fcall"] <= 0 {
		t.Errorf("no instructions for fcall: %v", c.InstructionsByCommand)
	}
	if !strings.Contains(r.Conditions, "under callgrind (timings distorted; cost over the whole run)") {
		t.Errorf("conditions do not say the timings are distorted and the cost is the whole run's: %s", r.Conditions)
	}
	// The whole run's cost divides by every job, warm-up and drain included.
	if c.Jobs != r.Ledger.Completed {
		t.Errorf("cost divides by %d jobs, the run completed %d", c.Jobs, r.Ledger.Completed)
	}
	if !strings.Contains(out, "Redis instructions per job") {
		t.Errorf("no instructions table:\n%s", out)
	}
}

// A metered scenario refuses what it cannot meter, naming the field.
func TestInstructionsMeterChecks(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"redis: {mode: cluster, meter: instructions}", "redis.meter"},
		{"redis: {meter: instructions}\nfaults: [{kind: redis_restart, at: 1s, duration: 1s}]", "redis_restart"},
		{"redis: {meter: cycles}", "redis.meter"},
	} {
		_, err := scenario.ParseScenario("bad.yaml", []byte("name: bad\nbackends: [zset]\n"+tc.src+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to name %q", tc.src, err, tc.want)
		}
	}
}
