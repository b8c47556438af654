package cli

import (
	"os"
	"runtime/debug"
)

// harnessGCPercent is the garbage collector's target for aebench runs. At
// Go's default (100) the harness's few-MB heap is collected about ten times
// a second, and each cycle's mark phase takes one of the machine's two
// cores for several milliseconds: the null calibration store's e2e p99 was
// set by those pauses, not by anything a job store does. A soft memory
// limit keeps the heap bounded all the same.
const (
	harnessGCPercent  = 2000
	harnessMemLimitGB = 8
)

// tuneGC applies the harness's GC settings unless the user set GOGC or
// GOMEMLIMIT, which then win; the run's environment block reports both.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(harnessGCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(harnessMemLimitGB << 30)
	}
}
