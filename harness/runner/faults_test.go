package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// TestMain lets this test binary be a worker process: the coordinator
// re-executes os.Executable() with AEBENCH_WORKER=1.
func TestMain(m *testing.M) {
	if IsWorkerProcess() {
		os.Exit(WorkerMain(nil, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const faultBase = `
duration: 2500ms
warmup: 300ms
drain: 10s
calibration: off
redis: {mode: embedded}
store: {backoff_base: 50ms, backoff_max: 200ms, poll_interval: 20ms}
producers: {rate: 150, delayed: 0.2, delay: "uniform(50ms, 300ms)"}
workers: {count: 3, concurrency: 4, claim_wait: 200ms, handler: "uniform(20ms, 80ms)", lease: 500ms, recovery_mode: lease, recovery_interval: 100ms, mover_interval: 20ms}
`

// TestFaultKinds runs each fault kind on one backend and checks that it
// landed, that the run recovered, and that nothing acknowledged was lost
// (or, for a Redis restart without persistence, that the loss is reported
// as expected).
func TestFaultKinds(t *testing.T) {
	cases := []struct {
		name, backends, extra string
		want                  map[faults.Kind]int
		lostExpected          bool
	}{
		{"worker crashes and kills", "[zset]", `
workers: {count: 3, processes: 1, concurrency: 4, claim_wait: 200ms, handler: "uniform(20ms, 80ms)", lease: 500ms, recovery_mode: lease, recovery_interval: 100ms}
faults:
  - {kind: worker_crash, point: after_claim, at: 600ms, worker: 0}
  - {kind: worker_crash, point: in_handler, at: 900ms, worker: 1}
  - {kind: worker_crash, point: after_handler, at: 1200ms, worker: 0}
  - {kind: worker_kill, point: in_handler, at: 800ms}
  - {kind: worker_kill, point: random, at: 1800ms}
  - {kind: recoverer_crash, at: 700ms}
`, map[faults.Kind]int{faults.WorkerCrash: 3, faults.WorkerKill: 2, faults.RecovererCrash: 1}, false},
		// asynq gives a crashed worker's claim back when its lease lapses
		// (a killed process's tasks wait 60 s or more for asynq's recoverer).
		{"asynq worker crashes", `[{name: asynq, options: {task_check_interval: 20ms, delayed_task_check_interval: 100ms}}]`, `
faults:
  - {kind: worker_crash, point: after_claim, at: 600ms, worker: 0}
  - {kind: worker_crash, point: in_handler, at: 900ms, worker: 1}
  - {kind: worker_crash, point: after_handler, at: 1200ms, worker: 2}
`, map[faults.Kind]int{faults.WorkerCrash: 3}, false},
		{"mover crash", `[{name: dual, options: {mover: background}}]`, `
faults:
  - {kind: mover_crash, at: 800ms}
`, map[faults.Kind]int{faults.MoverCrash: 1}, false},
		{"redis restart without persistence, pause", "[stream]", `
expect: {lost: unless_persistent}
faults:
  - {kind: redis_restart, at: 800ms, duration: 300ms}
  - {kind: redis_pause, at: 1800ms, duration: 300ms}
`, map[faults.Kind]int{faults.RedisRestart: 1, faults.RedisPause: 1}, true},
		{"redis restart with aof always", "[zset]", `
redis: {mode: embedded, persistence: aof-always}
expect: {lost: unless_persistent}
faults:
  - {kind: redis_restart, at: 800ms, duration: 300ms}
`, map[faults.Kind]int{faults.RedisRestart: 1}, false},
		{"network", "[bucket]", `
faults:
  - {kind: net_latency, at: 500ms, duration: 400ms, latency: 100ms, jitter: 50ms}
  - {kind: net_reset, at: 1100ms, duration: 300ms}
  - {kind: net_timeout, at: 1600ms, duration: 500ms}
`, map[faults.Kind]int{faults.NetLatency: 1, faults.NetReset: 1, faults.NetTimeout: 1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := faultBase + "backends: " + tc.backends + "\n" + tc.extra
			// A later mapping of the same section replaces the base's.
			src = dedupeSections(src)
			s, err := scenario.ParseScenario("faults.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			// One case draws the plots, to check the recovery plot.
			plots := tc.name == "worker crashes and kills"
			out, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), NoPlots: !plots})
			if err != nil {
				t.Fatal(err)
			}
			r := out.Summary.Runs[0]
			if r.Status != summary.StatusOK {
				t.Fatalf("status %s: %v", r.Status, r.Problems)
			}
			rv := r.Recovery
			if rv == nil {
				t.Fatal("no recovery report")
			}
			for k, n := range tc.want {
				if rv.Faults[k] != n {
					t.Errorf("%s landed %d times, want %d (records %+v)", k, rv.Faults[k], n, rv.Records)
				}
			}
			if rv.Skipped != 0 {
				t.Errorf("skipped faults: %+v", rv.Records)
			}
			l := r.Ledger
			if l.Unexpected != 0 || l.StartedEarly != 0 {
				t.Errorf("ledger %+v", l)
			}
			if tc.lostExpected {
				if l.Lost == 0 || !l.LostExpected {
					t.Errorf("want lost jobs reported as expected, got lost %d expected %v", l.Lost, l.LostExpected)
				}
			} else if l.Lost != 0 || rv.Lost != 0 {
				t.Errorf("lost %d (at faults %d): %v", l.Lost, rv.Lost, l.LostIDs)
			}
			if _, crash := tc.want[faults.WorkerCrash]; crash && (rv.Restarted == 0 || rv.RecoveryNs["p50"] <= 0) {
				t.Errorf("no recovery measured: %+v", rv)
			}
			if plots {
				checkRecoveryFiles(t, out.Dir, r)
			}
		})
	}
}

// dedupeSections keeps the last top-level mapping of each key, so a case
// can replace a section of the base scenario.
func dedupeSections(src string) string {
	var keys []string
	blocks := map[string]string{}
	var cur string
	for _, line := range strings.Split(src, "\n") {
		if line == "" {
			continue
		}
		if line[0] != ' ' && line[0] != '-' {
			cur = strings.SplitN(line, ":", 2)[0]
			if _, ok := blocks[cur]; !ok {
				keys = append(keys, cur)
			}
			blocks[cur] = ""
		}
		blocks[cur] += line + "\n"
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(blocks[k])
	}
	return b.String()
}

// checkRecoveryFiles: the recovery histogram is in the run's interval log
// under the tag <label>.recovery, with every sample, and drawn as a plot.
func checkRecoveryFiles(t *testing.T, dir string, r summary.RunSummary) {
	t.Helper()
	n := hlogCount(t, filepath.Join(dir, r.Files.HLog), r.Label+".recovery")
	if n == 0 || float64(n) != r.Recovery.RecoveryNs["count"] {
		t.Errorf("hlog: %d recovery samples under %s.recovery, summary counts %v", n, r.Label, r.Recovery.RecoveryNs["count"])
	}
	if st, err := os.Stat(filepath.Join(dir, "recovery.png")); err != nil || st.Size() == 0 {
		t.Errorf("recovery.png: %v", err)
	}
}
