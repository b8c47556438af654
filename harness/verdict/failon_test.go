package verdict

import (
	"strings"
	"testing"
)

// TestFailOnTightensOnly: a --fail-on on a gated metric may only lower its
// limit; above it, it is refused unless --loosen, and then named; on an
// ungated metric it adds a gate at any limit.
func TestFailOnTightensOnly(t *testing.T) {
	for _, tc := range []struct {
		expr     string
		loosen   bool
		err      string
		loosened string
	}{
		{"e2e.p99:+5%", false, "", ""},
		{"e2e.p99:+10%", false, "", ""},
		{"e2e.p99:+20%", false, "would loosen e2e.p99's gate (its limit is 10%)", ""},
		{"e2e.p99:+20%", true, "", "e2e.p99: limit 10% -> 20%"},
		{"throughput:-25%", false, "would loosen throughput's gate", ""},
		{"cmds_per_job:+10%", false, "would loosen cmds_per_job's gate (its limit is 4%)", ""},
		{"cmds_per_job:+1%", false, "", ""},
		{"queue_wait.p99:+50%", false, "", ""},
		{"client_allocs_per_job:+22%", false, "", ""},
	} {
		th, err := ParseFailOn(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got, err := CheckFailOn([]Threshold{th}, DefaultNoiseFloor, tc.loosen)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--loosen")):
			t.Errorf("%s: err %v; want one naming %q and --loosen", tc.expr, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v; want accepted", tc.expr, err)
		case strings.Join(got, "") != tc.loosened:
			t.Errorf("%s (loosen %v): loosened %q, want %q", tc.expr, tc.loosen, got, tc.loosened)
		}
	}
}

// TestScenarioThresholdsTightenOnly: a scenario's relative thresholds (the
// candidate's own file) never loosen a gate, and the tightest of several
// on one metric holds.
func TestScenarioThresholdsTightenOnly(t *testing.T) {
	var ts []Threshold
	for _, e := range []string{"cmds_per_job < +50%", "e2e.p99 < +5%", "queue_wait.p99 < +30%", "throughput > -40%"} {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		ts = append(ts, th)
	}
	kept, dropped := TightenOnly(ts, DefaultNoiseFloor)
	if len(kept) != 2 || len(dropped) != 2 || !strings.Contains(strings.Join(dropped, ";"), "cmds_per_job") {
		t.Fatalf("kept %v, dropped %v; want e2e.p99 and queue_wait.p99 kept, cmds_per_job and throughput dropped", kept, dropped)
	}
	tight, err := ParseFailOn("e2e.p99:+3%")
	if err != nil {
		t.Fatal(err)
	}
	limits := gateLimits(CompareOptions{NoiseFloor: DefaultNoiseFloor, FailOn: append(kept, tight)})
	if limits["e2e.p99"] != 3 || limits["cmds_per_job"] != 4 {
		t.Errorf("limits e2e.p99 %g, cmds_per_job %g; want 3 (the tightest) and 4 (its floor)", limits["e2e.p99"], limits["cmds_per_job"])
	}
}
