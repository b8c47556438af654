package runner

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// A backend runs a scenario only when it declares what the scenario uses;
// otherwise the reason names the field and the capability.
func TestNotApplicable(t *testing.T) {
	reg := registry.Builtin()
	for _, tc := range []struct {
		name, backend, src string
		want               []string // empty: applicable
	}{
		{"floor, plain", "floor", "producers: {rate: 100}", nil},
		{"floor, delayed", "floor", "producers: {rate: 100, delayed: 0.1}", []string{"producers.delayed 0.1", "delayed-jobs", "floor does not declare"}},
		{"floor, failures", "floor", "producers: {rate: 100}\nworkers: {fail: 0.1}", []string{"workers.fail 0.1", "retries"}},
		{"floor, json", "floor", "producers: {rate: 100}\nencoding: json", []string{"encoding json", "record-encodings"}},
		{"floor, crashes", "floor", "producers: {rate: 100}\nfaults:\n  - {kind: worker_crash, point: in_handler, at: 1s}",
			[]string{"faults worker_crash", "lease-recovery"}},
		{"floor, net latency only", "floor", "producers: {rate: 100}\nfaults:\n  - {kind: net_latency, latency: 10ms, at: 1s, duration: 1s}", nil},
		{"floor, heartbeat over long handlers", "floor", "producers: {rate: 100}\nworkers: {heartbeat: true, lease: 300ms, handler: 200ms}",
			[]string{"workers.heartbeat", "lease-recovery"}},
		{"asynq, crashes (self-recovering)", "asynq", "producers: {rate: 100, delayed: 0.1}\nworkers: {fail: 0.1}\nfaults:\n  - {kind: worker_crash, point: in_handler, at: 1s}", nil},
		{"asynq, json", "asynq", "producers: {rate: 100}\nencoding: json", []string{"record-encodings"}},
		{"zset, everything", "zset", "producers: {rate: 100, delayed: 0.1}\nworkers: {fail: 0.1, processes: 1}\nencoding: json\nfaults:\n  - {kind: worker_kill, point: in_handler, at: 1s}\n  - {kind: redis_restart, at: 2s}", nil},
	} {
		s, err := scenario.ParseScenario("t.yaml", []byte("duration: 3s\nwarmup: 0s\ncalibration: off\nbackends: ["+tc.backend+"]\n"+tc.src+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		be, err := reg.Lookup(tc.backend)
		if err != nil {
			t.Fatal(err)
		}
		why := notApplicable(be, be.Caps, s.Runs()[0].Config)
		if len(tc.want) == 0 && why != "" {
			t.Errorf("%s: not applicable: %s", tc.name, why)
		}
		for _, w := range tc.want {
			if !strings.Contains(why, w) {
				t.Errorf("%s: %q does not mention %q", tc.name, why, w)
			}
		}
	}
}

// Ratios divide by the references' mean over repeats in the same cell, and
// leave out runs without numbers.
func TestSetRatios(t *testing.T) {
	run := func(id, kind string, cell int, done, cpu, cmds float64, status string) summary.RunSummary {
		r := summary.RunSummary{ID: id, Label: strings.TrimRight(id, "0123456789"), Kind: kind, Cell: cell, Status: status}
		r.Throughput.Completed = done
		if cpu > 0 {
			r.Cost = &engine.CostReport{RedisCPUMicros: cpu, Commands: cmds}
		}
		return r
	}
	sum := &summary.Summary{Runs: []summary.RunSummary{
		run("floor1", "reference", 1, 1000, 10, 3, summary.StatusOK),
		run("floor2", "reference", 1, 3000, 30, 3, summary.StatusOK),
		run("zset1", "job store", 1, 1000, 40, 12, summary.StatusOK),
		run("asynq1", "peer", 1, 500, 50, 19, summary.StatusOK),
		run("zset2", "job store", 2, 1000, 40, 12, summary.StatusOK),
		run("stream1", "job store", 1, 0, 0, 0, summary.StatusNotApplicable),
		run("dual1", "job store", 1, 1005, 30, 14, summary.StatusOK),
		run("bucket1", "job store", 1, 900, 20, 10, summary.StatusOK),
		run("stream1", "job store", 1, 1200, 90, 30, summary.StatusOK),
	}}
	for i := range sum.Runs {
		sum.Runs[i].Throughput.Offered = 1000
	}
	setRatios(sum)
	z := sum.Runs[2].Ratios
	if x := z["floor"]; x.Throughput != 0.5 || x.RedisCPUPerJob != 2 || x.CommandsPerJob != 4 || x.Against != "floor" {
		t.Errorf("zset x floor %+v", x)
	}
	// dual is within 1% of zset's jobs/s and cheaper: the best strategy;
	// bucket is cheaper still but 10% slower; stream completed more than
	// the 1000 offered (catching up after falling behind) at a higher cost.
	if x := sum.Runs[3].Ratios["best strategy"]; x.Against != "dual" || x.Throughput != 500.0/1005 || x.RedisCPUPerJob != 50.0/30 {
		t.Errorf("asynq x best strategy %+v", x)
	}
	if _, ok := z["asynq"]; ok {
		t.Errorf("a peer is measured against the references, not one: %+v", z)
	}
	if x := sum.Runs[4].Ratios; len(x) != 1 || x["best strategy"].Against != "zset" {
		t.Errorf("cell 2 (no floor, one store): %+v", x)
	}
	if sum.Runs[5].Ratios != nil {
		t.Errorf("a run without numbers got ratios: %+v", sum.Runs[5].Ratios)
	}
}
