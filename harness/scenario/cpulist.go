package scenario

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// setCPUList reads redis.cpus: a CPU list as redis-server's
// server_cpulist takes it (1, 2-3, 0,2), each CPU one this machine has
// online. Redis ignores a CPU it cannot pin to without a word, so a list
// naming a CPU the machine lacks is refused here. The machine's CPUs come
// from /sys/devices/system/cpu/online, not the process's affinity: under
// taskset -c 0 the harness sees one CPU, and Redis is meant for another.
func setCPUList(dst *string, v string) error {
	if v == "" { // the default: not pinned
		*dst = ""
		return nil
	}
	cpus, ok := parseCPUList(v)
	if !ok {
		return fmt.Errorf("%q is not a CPU list (1, 2-3, 0,2)", v)
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if online, ok := parseCPUList(strings.TrimSpace(string(b))); ok {
			for c := range cpus {
				if !online[c] {
					return fmt.Errorf("%q names CPU %d; this machine's online CPUs are %s", v, c, strings.TrimSpace(string(b)))
				}
			}
		}
	}
	*dst = v
	return nil
}

// parseCPUList reads "0-2,5" as the set of CPUs 0, 1, 2 and 5.
func parseCPUList(v string) (map[int]bool, bool) {
	set := map[int]bool{}
	for _, part := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 4095 {
			return nil, false
		}
		for c := a; c <= b; c++ {
			set[c] = true
		}
	}
	return set, true
}
