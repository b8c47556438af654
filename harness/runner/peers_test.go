package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/driver/drivertest"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/redisserver"
)

// TestDriverPeers runs each job system behind its driver (BullMQ, Sidekiq,
// RQ) twice on a spawned Redis: a smoke run with delayed jobs and handler
// failures, and a run whose worker process is SIGKILLed. Every job is
// accounted for; a loss is allowed only as the system declares it (up to
// the jobs the kill caught in flight). A driver that is not installed is
// skipped with the way to install it, except under CI, which installs
// them (.ci/run).
func TestDriverPeers(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, spec driver.Spec) {
		for _, tc := range []struct {
			name, faults string
		}{
			{"smoke", ""},
			{"sigkill", "faults: [{kind: worker_kill, point: random, at: 2s, replace_after: 300ms}]"},
		} {
			r := runDriverScenario(t, spec.Name, tc.faults)
			checkDriverRun(t, tc.name, r, tc.faults != "")
		}
	})
}

func runDriverScenario(t *testing.T, name, faults string) summary.RunSummary {
	t.Helper()
	src := fmt.Sprintf(`
name: driver-%s
duration: 3s
warmup: 500ms
drain: 40s
calibration: off
backends: [%s]
store: {backoff_base: 1s, backoff_max: 1s}
producers: {rate: 60, delayed: 0.1, delay: "uniform(50ms, 500ms)", max_retries: 1}
workers: {count: 1, processes: 1, concurrency: 3, handler: "uniform(20ms, 80ms)", fail: %s, lease: 2s}
%s
`, name, name, map[bool]string{true: "0", false: "0.05"}[faults != ""], faults)
	outcome, out := runScenarioText(t, "driver.yaml", src)
	t.Log(out)
	if len(outcome.Summary.Runs) != 1 {
		t.Fatalf("%d runs", len(outcome.Summary.Runs))
	}
	return outcome.Summary.Runs[0]
}

// runScenarioText parses a scenario from its text and runs it into a
// temporary folder, skipping the test when no Redis can be had; it
// returns the outcome and what the run printed.
func runScenarioText(t *testing.T, file, src string) (*Outcome, string) {
	t.Helper()
	s, err := scenario.ParseScenario(file, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	outcome, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Stdout: &out, NoPlots: true})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis: %v", err)
	}
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	return outcome, out.String()
}

func checkDriverRun(t *testing.T, name string, r summary.RunSummary, killed bool) {
	t.Helper()
	l := r.Ledger
	if r.Status != summary.StatusOK {
		t.Errorf("%s: status %s: %s %v", name, r.Status, r.Error, l.Problems)
	}
	if l.Acknowledged == 0 || l.Completed == 0 {
		t.Errorf("%s: %d acknowledged, %d completed", name, l.Acknowledged, l.Completed)
	}
	if !killed {
		if l.Lost != 0 || l.DuplicatedExecutions != 0 {
			t.Errorf("%s: %d lost, %d duplicated without a fault", name, l.Lost, l.DuplicatedExecutions)
		}
		return
	}
	rv := r.Recovery
	if rv == nil || rv.Landed != 1 {
		t.Fatalf("%s: the SIGKILL did not land: %+v", name, rv)
	}
	// The status holds the job-by-job judgement (the engine's
	// judgeDeclaredLoss); this is its plain form: every lost job is one of
	// the kill's in flight, or one of the never-started jobs the killed
	// process may hold beyond them, as many as its driver declares
	// (holds_extra: Sidekiq's 1, Celery's 1 + concurrency under acks early).
	if l.Lost != l.LostDeclaredJobs || len(l.LostBeyondIDs) > 0 ||
		l.Lost-l.LostHeldJobs > int64(rv.Affected) || l.LostHeldJobs > l.LostHeldAllowed {
		t.Errorf("%s: %d lost, %d of them declared (%d in flight at the kill; %d held, %d allowed), beyond: %v",
			name, l.Lost, l.LostDeclaredJobs, rv.Affected, l.LostHeldJobs, l.LostHeldAllowed, l.LostBeyondIDs)
	}
	if l.Lost > 0 && l.LostDeclared == "" {
		t.Errorf("%s: %d lost, not declared by the driver", name, l.Lost)
	}
}

// TestDeclaredLossByJob: a declared loss is judged job by job. A copy of
// the Sidekiq driver that acknowledges two jobs and never stores them
// (enqueued about 500ms after the run's only kill, so no process held
// them) must fail its run, naming both, though its count of lost jobs is
// below what a count bound (the kill's in-flight jobs plus holds_extra)
// let through before. Its drain ends once only the lost jobs are open.
func TestDeclaredLossByJob(t *testing.T) {
	spec := driver.Sidekiq
	drop := []string{"p0-75", "p1-75"}
	const at = "  def self.enqueue(jobs)\n"
	patchDriverCopy(t, spec, "driver.rb", at, at+`    jobs = jobs.reject { |j| %w[`+strings.Join(drop, " ")+`].include?(j["id"]) } # acknowledged, never stored
`)
	r := runDriverScenario(t, spec.Name, "faults: [{kind: worker_kill, point: random, at: 1500ms, replace_after: 300ms}]")
	l := r.Ledger
	if r.Status == summary.StatusOK {
		t.Fatalf("a driver that dropped %v passed: lost %d (%d declared)", drop, l.Lost, l.LostDeclaredJobs)
	}
	if !slices.Equal(l.LostBeyondIDs, drop) {
		t.Errorf("lost beyond the declaration: %v; want %v (problems %v)", l.LostBeyondIDs, drop, l.Problems)
	}
	if !slices.ContainsFunc(l.Problems, func(p string) bool { return strings.Contains(p, drop[0]) && strings.Contains(p, drop[1]) }) {
		t.Errorf("no problem names %v: %v", drop, l.Problems)
	}
	if r.Window.DrainS >= r.Config.Drain.Seconds() {
		t.Errorf("the drain ran its full %s with only lost jobs open", r.Config.Drain)
	}
}

// TestDriverStartsBeforeClock: a driver's worker processes start before
// the run's clock. A copy of the Sidekiq driver whose worker takes 2 s
// more to say ready (a runtime loading its packages on a busy machine)
// must not hold the producers back: started after the clock, it made
// every send of its first 2 s late, in a run whose warm-up is 500 ms.
func TestDriverStartsBeforeClock(t *testing.T) {
	spec := driver.Sidekiq
	const at = "        start_flusher\n        emit({e: \"ready\"})\n"
	patchDriverCopy(t, spec, "aebench_job.rb", at, "        sleep 2\n"+at)
	r := runDriverScenario(t, spec.Name, "")
	checkDriverRun(t, "slow start", r, false)
	if r.Health == nil {
		t.Fatal("no health")
	}
	if lag := time.Duration(r.Health.ScheduleLagP99Ns); lag > time.Second {
		t.Errorf("producers %v late at p99 behind a worker that took 2 s to start", lag)
	}
}

// patchDriverCopy copies spec's driver folder to a temporary one, replaces
// the first at in its file with with (failing when file has no at), and
// points driver.DirEnv at the copy for the test; a driver not installed
// skips the test.
func patchDriverCopy(t *testing.T, spec driver.Spec, file, at, with string) {
	t.Helper()
	if why, err := driver.Missing(context.Background(), spec); err != nil {
		t.Fatal(err)
	} else if why != "" {
		t.Skip(why)
	}
	src, err := spec.Dir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), spec.Name)
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, file)
	code, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patched := strings.Replace(string(code), at, with, 1)
	if patched == string(code) {
		t.Fatalf("%s has no %q to patch", path, at)
	}
	if err := os.WriteFile(path, []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(driver.DirEnv, filepath.Dir(dir))
}
