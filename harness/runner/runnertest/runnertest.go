// Package runnertest runs short real scenarios (a spawned redis-server)
// to give the tests of verdict, the report page and the CLI result sets of
// their own, instead of result files committed to the repository.
package runnertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/runner"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/redisserver"
)

// Scenario is a short open-loop load, immediate jobs only, with a backend
// list and options left to the caller: BACKENDS is replaced.
const Scenario = `name: verdicttest
seed: 7
duration: 1s
warmup: 300ms
drain: 5s
calibration: off
redis: {mode: embedded}
backends: BACKENDS
producers: {count: 1, mode: open, rate: 300, arrivals: poisson}
workers: {count: 2, concurrency: 4, claim_batch: 1, claim_wait: 1s, handler: 200us}
`

// Run writes the scenario (BACKENDS replaced by backends, a YAML list) to a
// temporary file, runs it with repeats repeats into a temporary results
// root and returns the results directory. It skips the test when no Redis
// can be had. Overrides apply after repeats.
func Run(t testing.TB, backends string, repeats int, plots bool, overrides ...scenario.Override) string {
	t.Helper()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "runnertest.yaml")
	body := []byte(strings.Replace(Scenario, "BACKENDS", backends, 1))
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	overrides = append([]scenario.Override{{Path: "repeats", Value: strconv.Itoa(repeats)}}, overrides...)
	sc, err := scenario.LoadScenario(file, overrides...)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	out, err := runner.Run(context.Background(), sc, runner.Options{OutDir: filepath.Join(tmp, "results"), NoPlots: !plots})
	if errors.Is(err, redisserver.ErrNoRedis) {
		t.Skipf("no Redis to run a scenario on: %v", err)
	}
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(out.Failed) > 0 || len(out.Errored) > 0 {
		t.Fatalf("runs failed %v or errored %v", out.Failed, out.Errored)
	}
	return out.Dir
}
