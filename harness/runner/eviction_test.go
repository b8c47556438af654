package runner

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/ledger"
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
workers: {count: 2, processes: 2, concurrency: 4, handler: 1ms, lease: 1s, recovery_interval: 200ms}
faults:
  - {kind: memory_pressure, at: 2s, duration: 2s, fill: 1.2}
`
	lru := runScenario(t, "lru.yaml", strings.Replace(src, "POLICY", "allkeys-lru", 1)).Summary.Runs[0]
	if lru.Ledger.Lost == 0 || lru.Cost == nil || lru.Cost.EvictedKeys == 0 {
		t.Errorf("allkeys-lru: lost %d, evicted %v: want jobs lost to eviction", lru.Ledger.Lost, lru.Cost)
	}
	if c := lru.Ledger.LostCauses; c[ledger.CauseEvicted] != lru.Ledger.Lost {
		t.Errorf("allkeys-lru: lost %d by cause %v: want every one evicted", lru.Ledger.Lost, c)
	}
	named := false
	for _, p := range lru.Problems {
		named = named || strings.Contains(p, "by cause evicted")
	}
	if !named {
		t.Errorf("allkeys-lru: problems %q do not name eviction", lru.Problems)
	}
	no := runScenario(t, "noevict.yaml", strings.Replace(src, "POLICY", "noeviction", 1)).Summary.Runs[0]
	if no.Ledger.Lost != 0 || no.Cost == nil || no.Cost.EvictedKeys != 0 {
		t.Errorf("noeviction: lost %d, cost %+v: want no loss, no eviction", no.Ledger.Lost, no.Cost)
	}
	// Refusals are counted as such: a refused enqueue is refused, not
	// indeterminate, and matches the OOM count.
	if o := no.Counters.OOMRefused; o.Enqueued == 0 || no.Ledger.Refused != o.Enqueued || no.Ledger.Indeterminate != 0 {
		t.Errorf("noeviction: OOM refusals %+v, ledger refused %d indeterminate %d: want refused enqueues counted as refused", o, no.Ledger.Refused, no.Ledger.Indeterminate)
	}
	// The workers are processes: their refused completions reach the
	// coordinator's counters and ledger.
	t.Logf("noeviction: complete errors %d, OOM refusals %+v, ledger complete refused %d (retried %d)",
		no.Counters.CompleteErrors, no.Counters.OOMRefused, no.Ledger.CompleteRefused, no.Ledger.CompleteRefusedRetried)
	if o := no.Counters.OOMRefused; o.Completes != no.Ledger.CompleteRefused || o.Completes > no.Counters.CompleteErrors {
		t.Errorf("noeviction: %d completes refused by the counters, %d jobs by the ledger, %d complete errors: want them to agree", o.Completes, no.Ledger.CompleteRefused, no.Counters.CompleteErrors)
	}
	if no.Census == nil || no.Census.LeakCount() != 0 {
		t.Errorf("noeviction: census %+v, want one with no leak", no.Census)
	}
}
