package runner

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/aebench/aebench/harness/conditions"
)

// redis.cpus pins the spawned server's main thread: its affinity, read
// from /proc, is the CPU asked, where a dropped option leaves it on every
// CPU the harness may use.
func TestRedisCPUs(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		t.Skipf("needs two CPUs to tell a pinned server from one that is not (affinity: %v)", err)
	}
	last := -1
	for c := range 1024 {
		if set.IsSet(c) {
			last = c
		}
	}
	p := newRedisPool(t.Logf)
	defer func() { _ = p.close() }()
	pr, err := p.get(context.Background(), conditions.RedisConfig{Mode: "embedded", HZ: 10, Persistence: "none", CPUs: strconv.Itoa(last)})
	if err != nil {
		t.Fatal(err)
	}
	pid := pr.r.Nodes[0].PID()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			got = strings.TrimSpace(v)
		}
	}
	if got != strconv.Itoa(last) {
		t.Errorf("redis-server's main thread may run on CPUs %q; redis.cpus asked %d", got, last)
	}
}

// pinHarness moves every thread of this process off Redis's CPUs, and
// refuses a list that leaves it none.
func TestPinHarness(t *testing.T) {
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil || orig.Count() < 2 {
		t.Skipf("needs two CPUs (affinity: %v)", err)
	}
	defer func() {
		if err := setAffinity(orig); err != nil {
			t.Fatal(err)
		}
	}()
	all := conditions.FormatCPUList(cpuSetOf(orig))
	if _, _, err := pinHarness(all); err == nil || !strings.Contains(err.Error(), "leaves the harness no CPU") {
		t.Errorf("redis.cpus %s, every CPU the harness has: err = %v", all, err)
	}
	last := -1
	for c := range cpuSetOf(orig) {
		last = max(last, c)
	}
	mine, restore, err := pinHarness(strconv.Itoa(last))
	if err != nil {
		t.Fatal(err)
	}
	threadsOn(t, mine, fmt.Sprintf("pinned off Redis's CPU %d", last))
	restore()
	threadsOn(t, all, "given back its CPUs at the plan's end")
}

// threadsOn checks that every thread of this process may run on exactly
// the CPUs in list.
func threadsOn(t *testing.T, list, when string) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		status, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // exited
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != list {
				t.Errorf("thread %s may run on %q; want %s (%s)", task.Name(), strings.TrimSpace(v), list, when)
			}
		}
	}
}
