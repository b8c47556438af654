package runner

import (
	"strings"
	"testing"
)

// TestEviction: a memory_pressure fault on a server at maxmemory loses
// acknowledged jobs under allkeys-lru, each counted lost with eviction
// named and evicted_keys counted, and loses none under noeviction, where
// the same pressure refuses writes instead (enqueue errors, not losses).
func TestEviction(t *testing.T) {
	const src = `name: evict
seed: 5
warmup: 1s
duration: 4s
drain: 20s
calibration: off
redis: {mode: embedded, maxmemory: 16MiB, maxmemory_policy: POLICY}
expect: {lost: allowed}
store: {retention: 1h}
backends: [zset]
producers: {count: 1, rate: 300, delayed: 0.4, delay: "uniform(2s, 4s)", payload: 1KiB}
workers: {count: 2, concurrency: 4, handler: 1ms, lease: 1s, recovery_interval: 200ms}
faults:
  - {kind: memory_pressure, at: 2s, duration: 2s, fill: 1.2}
`
	lru := runScenario(t, "lru.yaml", strings.Replace(src, "POLICY", "allkeys-lru", 1)).Summary.Runs[0]
	if lru.Ledger.Lost == 0 || lru.Cost == nil || lru.Cost.EvictedKeys == 0 {
		t.Errorf("allkeys-lru: lost %d, evicted %v: want jobs lost to eviction", lru.Ledger.Lost, lru.Cost)
	}
	named := false
	for _, p := range lru.Problems {
		named = named || strings.Contains(p, "lost to eviction")
	}
	if !named {
		t.Errorf("allkeys-lru: problems %q do not name eviction", lru.Problems)
	}
	no := runScenario(t, "noevict.yaml", strings.Replace(src, "POLICY", "noeviction", 1)).Summary.Runs[0]
	if no.Ledger.Lost != 0 || no.Counters.EnqueueErrors == 0 || no.Cost == nil || no.Cost.EvictedKeys != 0 {
		t.Errorf("noeviction: lost %d, enqueue errors %d, cost %+v: want refusals, no loss", no.Ledger.Lost, no.Counters.EnqueueErrors, no.Cost)
	}
}
