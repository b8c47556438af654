//go:build linux

package health

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU is the CPU time (user + system) this process has used.
func CPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// RunQueueWait is how long this process's threads have waited on a CPU run
// queue, runnable but not running (the second field of each thread's
// /proc/self/task/*/schedstat). Threads that exited are not counted.
func RunQueueWait() (time.Duration, bool) {
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

// Steal is the CPU time the hypervisor gave to others while this machine's
// CPUs wanted it (/proc/stat's steal, summed over every CPU), and the
// number of CPUs it is summed over.
func Steal() (time.Duration, int, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseSteal(string(data))
}
