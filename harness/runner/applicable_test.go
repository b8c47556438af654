package runner

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/scenario"
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
