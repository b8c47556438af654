package runner

import (
	"context"
	"testing"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestFailover runs scenarios/failover.yaml's WAIT cell: the queue's master
// of a 3-master cluster with 2 replicas each is killed 3s in, a replica
// takes over, and the run goes on through it: more jobs complete than the
// kill left time for, the ledger balances (lost counted, none here on a
// loopback), and the Redis cost of the window is marked not measured.
func TestFailover(t *testing.T) {
	s, err := scenario.LoadScenario("../../scenarios/failover.yaml",
		scenario.Override{Path: "store.wait_replicas", Value: "1"}, scenario.Override{Path: "duration", Value: "8s"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: true})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Summary.Runs[0]
	if r.Status != summary.StatusOK {
		t.Fatalf("status %s: %v", r.Status, r.Problems)
	}
	if r.Recovery == nil || r.Recovery.Faults[faults.MasterKill] != 1 {
		t.Fatalf("recovery %+v, want one master_kill", r.Recovery)
	}
	// The kill comes 3s into the run (1s warm-up): the open loop plans
	// 6000 jobs before it, so more acknowledged means enqueues went on
	// after the failover (a count, not a speed: the plan is fixed).
	if r.Ledger.Acknowledged <= 6000 || r.Ledger.Completed+r.Ledger.Lost < r.Ledger.Acknowledged {
		t.Errorf("acknowledged %d, completed %d, lost %d: the run did not go on after the failover", r.Ledger.Acknowledged, r.Ledger.Completed, r.Ledger.Lost)
	}
	if r.Cost == nil || r.Cost.Error == "" {
		t.Errorf("cost %+v, want it marked not measured", r.Cost)
	}
}
