package main

import (
	"os"
	"testing"

	"github.com/aebench/aebench/harness"
)

// TestMain lets this test binary serve as a worker process when a scenario
// run from a test uses workers.processes (the coordinator re-executes
// os.Executable()).
func TestMain(m *testing.M) {
	if harness.IsWorkerProcess() {
		os.Exit(harness.WorkerMain(os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
