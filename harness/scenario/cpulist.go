package scenario

import (
	"fmt"

	"github.com/aebench/aebench/harness/conditions"
)

// setCPUList reads redis.cpus: a CPU list as redis-server's
// server_cpulist takes it (1, 2-3, 0,2), each CPU one this machine has
// online. Redis ignores a CPU it cannot pin to without a word, so a list
// naming a CPU the machine lacks is refused here. The machine's CPUs, not
// the process's affinity: under taskset -c 0 the harness sees one CPU, and
// Redis is meant for another.
func setCPUList(dst *string, v string) error {
	if v == "" { // the default: not pinned
		*dst = ""
		return nil
	}
	cpus, ok := conditions.ParseCPUList(v)
	if !ok {
		return fmt.Errorf("%q is not a CPU list (1, 2-3, 0,2)", v)
	}
	if online, text, ok := conditions.OnlineCPUs(); ok {
		for c := range cpus {
			if !online[c] {
				return fmt.Errorf("%q names CPU %d; this machine's online CPUs are %s", v, c, text)
			}
		}
	}
	*dst = v
	return nil
}
