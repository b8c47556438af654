//go:build linux

package runner

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/aebench/aebench/harness/conditions"
)

// pinHarness keeps this process off the CPUs a plan gives its Redis
// (redis.cpus): every thread's affinity becomes its own less those CPUs
// (under taskset -c 0 with redis.cpus 1 nothing changes), and a thread
// made later inherits it, as do the processes it starts (worker processes,
// peers' drivers; redis-server then moves itself with server_cpulist).
// It returns the harness's CPUs and how to give it back the ones it had
// (at the plan's end: a later plan in the same process, without
// redis.cpus, would otherwise start its Redis on the harness's CPUs), or
// an error when none would be left.
func pinHarness(redisCPUs string) (string, func(), error) {
	red, ok := conditions.ParseCPUList(redisCPUs)
	if !ok {
		return "", nil, fmt.Errorf("redis.cpus %q is not a CPU list", redisCPUs)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "", nil, fmt.Errorf("redis.cpus: reading the harness's CPUs: %w", err)
	}
	mine := cpuSetOf(set)
	for c := range red {
		delete(mine, c)
	}
	if len(mine) == 0 {
		return "", nil, errNoHarnessCPU{redis: redisCPUs, mine: conditions.FormatCPUList(cpuSetOf(set))}
	}
	var keep unix.CPUSet
	for c := range mine {
		keep.Set(c)
	}
	restore := func() { _ = setAffinity(set) }
	if err := setAffinity(keep); err != nil {
		restore()
		return "", nil, err
	}
	return conditions.FormatCPUList(mine), restore, nil
}

// setAffinity gives every thread of this process the CPUs in set: twice
// over, since a thread the runtime starts during the first pass may have
// been made by one not yet pinned.
func setAffinity(set unix.CPUSet) error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("redis.cpus: listing the harness's threads: %w", err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// A thread that exited meanwhile is not an error.
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("redis.cpus: pinning the harness's thread %d: %w", tid, err)
			}
		}
	}
	return nil
}

func cpuSetOf(set unix.CPUSet) map[int]bool {
	m := map[int]bool{}
	for c := range 4096 {
		if set.IsSet(c) {
			m[c] = true
		}
	}
	return m
}
