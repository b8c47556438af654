package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/workerproc"
)

// TestRemoteWorkers runs every worker as a remote worker: two processes of
// this test binary that connect to the run over TCP from 127.0.0.2 and
// 127.0.0.3 (two hosts' addresses on the loopback), against a spawned
// 3-master cluster with the queue sharded 3 ways. One of them is killed
// mid-run: its connection ends, the run records a worker_lost fault, lease
// recovery gives its jobs to the other, and the one ledger shows lost 0.
// The handler histogram, recorded only by the workers, proves their
// histograms were merged here.
func TestRemoteWorkers(t *testing.T) {
	src := `
name: remote
duration: 3s
warmup: 500ms
drain: 10s
calibration: off
redis: {mode: cluster, masters: 3}
store: {shards: 3}
backends: [zset]
producers: {count: 1, rate: 200, delayed: 0.1, delay: "uniform(50ms, 300ms)"}
workers: {count: 2, remote: 2, concurrency: 4, claim_wait: 200ms, handler: "uniform(1ms, 5ms)", lease: 500ms, recovery_mode: lease, recovery_interval: 100ms}
`
	s, err := scenario.ParseScenario("remote.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addrRE := regexp.MustCompile(`--coordinator (\S+)`)
	addr := make(chan string, 1)
	logf := func(format string, args ...any) {
		if m := addrRE.FindStringSubmatch(fmt.Sprintf(format, args...)); m != nil {
			addr <- m[1]
		}
	}
	type result struct {
		out *Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: true, Logf: logf})
		done <- result{out, err}
	}()
	var coord string
	select {
	case coord = <-addr:
	case r := <-done:
		t.Fatalf("run ended before waiting for remote workers: %v", r.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the run never waited for remote workers")
	}
	var workers []*exec.Cmd
	for _, host := range []string{"127.0.0.2", "127.0.0.3"} {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), workerproc.WorkerEnv+"=1", workerproc.WorkerCoordinatorEnv+"="+coord, workerproc.WorkerBindEnv+"="+host)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, cmd)
	}
	t.Cleanup(func() {
		for _, w := range workers {
			_ = w.Process.Kill()
			_ = w.Wait()
		}
	})
	time.Sleep(2 * time.Second) // into the measured window
	if err := workers[0].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("run did not end")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	run := r.out.Summary.Runs[0]
	if run.Status != summary.StatusOK {
		t.Fatalf("status %s: %v", run.Status, run.Problems)
	}
	led := run.Ledger
	if led.Lost != 0 || led.Completed == 0 || led.Completed < led.Acknowledged-led.DeadLettered-led.UnfinishedAtDrain {
		t.Errorf("ledger: %+v, want lost 0 and every acknowledged job completed", led)
	}
	if run.Recovery == nil || run.Recovery.Faults[faults.WorkerLost] != 1 {
		t.Errorf("recovery report %+v, want one worker_lost fault", run.Recovery)
	}
	if run.LatencyNs["handler"]["p50"] <= 0 || run.LatencyNs["claim"]["p50"] <= 0 {
		t.Errorf("handler/claim latency %v/%v: the remote workers' histograms did not arrive", run.LatencyNs["handler"], run.LatencyNs["claim"])
	}
}
