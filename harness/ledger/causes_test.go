package ledger

import (
	"reflect"
	"testing"
)

func TestAttributeLost(t *testing.T) {
	states := map[string]int64{"not_found": 3, "queued_in_no_queue": 2, "running": 1}
	for _, tc := range []struct {
		name string
		lc   LossContext
		want map[string]int64
	}{
		{"no eviction, no restart: the store dropped them", LossContext{},
			map[string]int64{CauseStore: 6}},
		{"evictions: a record or index entry gone is evicted", LossContext{EvictedKeys: 40},
			map[string]int64{CauseEvicted: 5, CauseStore: 1}},
		{"a lossy restart", LossContext{LossyRestart: true},
			map[string]int64{CauseRestart: 5, CauseStore: 1}},
		{"both: the read-back cannot tell them apart", LossContext{EvictedKeys: 1, LossyRestart: true},
			map[string]int64{CauseEvicted + "_or_" + CauseRestart: 5, CauseStore: 1}},
		{"refused writes, nothing evicted", LossContext{OOMRefused: true},
			map[string]int64{CauseOOM: 5, CauseStore: 1}},
		{"a few keys evicted among refusals", LossContext{EvictedKeys: 7, OOMRefused: true},
			map[string]int64{CauseEvicted + "_or_" + CauseOOM: 5, CauseStore: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Report{Lost: 6, LostStates: states}
			r.AttributeLost(tc.lc)
			if !reflect.DeepEqual(r.LostCauses, tc.want) {
				t.Errorf("causes %v, want %v", r.LostCauses, tc.want)
			}
			if r.Lost != 6 {
				t.Errorf("Lost %d changed by the attribution", r.Lost)
			}
		})
	}
	r := Report{}
	r.AttributeLost(LossContext{EvictedKeys: 5})
	if r.LostCauses != nil {
		t.Errorf("no lost job, causes %v", r.LostCauses)
	}
}

// An enqueue Redis refused at maxmemory is refused, not indeterminate and
// never lost; a job whose Complete was refused is told apart by whether it
// completed later.
func TestRefusedAtMaxmemory(t *testing.T) {
	l := New()
	play(l, []ledgerStep{
		{op: "plan", id: "r"}, {op: "enqoom", id: "r"},
		{op: "plan", id: "a"}, {op: "ack", id: "a"}, {op: "start", id: "a", at: 1}, {op: "completeoom", id: "a"},
		{op: "recover", id: "a", at: 50}, {op: "start", id: "a", attempt: 1, at: 60}, {op: "complete", id: "a", attempt: 1, at: 61},
		{op: "plan", id: "s"}, {op: "ack", id: "s"}, {op: "start", id: "s", at: 1}, {op: "completeoom", id: "s"},
	})
	r := l.CheckWith(true)
	if r.Refused != 1 || r.Indeterminate != 0 {
		t.Errorf("refused %d, indeterminate %d; want 1, 0", r.Refused, r.Indeterminate)
	}
	if r.CompleteRefused != 2 || r.CompleteRefusedRetried != 1 {
		t.Errorf("complete refused %d, retried %d; want 2, 1", r.CompleteRefused, r.CompleteRefusedRetried)
	}
	if r.Lost != 1 || r.LostIDs[0] != "s" {
		t.Errorf("lost %d %v, want s alone (stuck after its refused Complete)", r.Lost, r.LostIDs)
	}
}
