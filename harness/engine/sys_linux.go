//go:build linux

package engine

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// workerProcAttr makes a worker process die with its coordinator
// (Pdeathsig), so a coordinator that dies never leaks workers, and puts it
// in its own process group so a terminal's Ctrl-C reaches only the
// coordinator, which then stops its workers itself.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// runQueueWait is how long this process's threads have waited on a CPU run
// queue, runnable but not running (the second field of each thread's
// /proc/self/task/*/schedstat). Threads that exited are not counted.
func runQueueWait() (time.Duration, bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(data))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			total += ns
		}
	}
	return time.Duration(total), true
}

// killGroup SIGKILLs a worker process and every process it started: they
// share its process group (workerProcAttr). A driver's worker forks (RQ's
// worker processes, their scheduler): a SIGKILL of the driver alone would
// leave them running, holding jobs and the events pipe.
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		return p.Kill()
	}
	return nil
}
