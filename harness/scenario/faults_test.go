package scenario

import (
	"strings"
	"testing"
)

func TestFaultSchemaErrors(t *testing.T) {
	base := "backends: [zset]\n"
	for _, tc := range []struct{ src, want string }{
		{"faults:\n  - {kind: worker_crash, point: nowhere, at: 1s}\n", "test.yaml:3:33: faults[0].point"},
		{"faults:\n  - {kind: meteor, at: 1s}\n", "not a fault kind"},
		{"faults:\n  - {kind: worker_kill, at: 1s}\n", "set workers.processes"},
		{"faults:\n  - {kind: redis_pause}\n", "needs at"},
		{"redis: {mode: cluster}\nfaults:\n  - {kind: net_reset, at: 1s}\n", "needs redis.mode embedded"},
		{"workers: {count: 2, processes: 3}\n", "above workers.count"},
	} {
		_, err := ParseScenario("test.yaml", []byte(base+tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
