package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
)

// TestPlan: aebench plan prints the expanded plan with its estimate and
// exits 0 without running anything; a combination a run would drop names
// both fields and exits 2.
func TestPlan(t *testing.T) {
	code, out, errOut := cli(t, "plan", filepath.Join("..", "..", "scenarios", "quick.yaml"))
	if code != exitOK || !strings.Contains(out, "1 cells, 5 runs") || !strings.Contains(out, "estimate: about") || !strings.Contains(out, "preflight: ok") {
		t.Fatalf("plan quick: exit %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct{ name, src, want1, want2 string }{
		{"rate in a closed loop", "backends: [zset]\nproducers: {mode: closed, rate: 50}\n", "producers.rate", "producers.mode closed"},
		{"ack_interval not below lease", "backends: [zset]\nworkers: {ack_batch: 10, ack_interval: 1s, lease: 1s}\n", "workers.ack_interval", "workers.lease"},
		{"delay without delayed jobs", "backends: [zset]\nproducers: {delayed: 0, delay: 1s}\n", "producers.delay", "producers.delayed"},
		{"masters off a cluster", "backends: [zset]\nredis: {masters: 3}\n", "redis.masters", "redis.mode cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, "plan", writeFile(t, "p.yaml", tc.src))
			if code != exitUsage || !strings.Contains(errOut, tc.want1) || !strings.Contains(errOut, tc.want2) {
				t.Errorf("exit %d %q, want 2 naming %s and %s", code, errOut, tc.want1, tc.want2)
			}
		})
	}
}

// TestInit: aebench init writes a starter scenario that plans (every
// preflight passes), never overwrites it, and refuses a backend that does
// not exist.
func TestInit(t *testing.T) {
	dir := t.TempDir()
	if code, out, errOut := cli(t, "init", dir); code != exitOK || !strings.Contains(out, "wrote") {
		t.Fatalf("init: exit %d %s%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "plan", filepath.Join(dir, "scenario.yaml")); code != exitOK {
		t.Fatalf("plan of the starter: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "init", dir); code != exitUsage || !strings.Contains(errOut, "never overwrites") {
		t.Errorf("second init: exit %d %q", code, errOut)
	}
	if code, _, errOut := cli(t, "init", "--backends", "zsett", t.TempDir()); code != exitUsage || !strings.Contains(errOut, `did you mean "zset"`) {
		t.Errorf("init --backends zsett: exit %d %q", code, errOut)
	}
}

// The plan says the order its rounds run in, which rotates.
func TestPlanOrder(t *testing.T) {
	sc, err := scenario.ParseScenario("o.yaml", []byte("repeats: 2\ncalibration: off\nbackends: [zset, null, stream]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printPlan(&b, sc, true)
	if !strings.Contains(b.String(), "(round 2: null, stream, zset)") {
		t.Errorf("plan:\n%s\nwant round 2's order", b.String())
	}
}
