package cli

import (
	"os"
	"testing"

	"github.com/aebench/aebench/harness/runner"
)

// TestMain lets this test binary serve as a worker process when a scenario
// run from a test uses workers.processes (the coordinator re-executes
// os.Executable()).
func TestMain(m *testing.M) {
	if runner.IsWorkerProcess() {
		os.Exit(runner.WorkerMain(nil, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
