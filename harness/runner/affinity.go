package runner

import "fmt"

// errNoHarnessCPU: redis.cpus takes every CPU the harness may run on.
type errNoHarnessCPU struct{ redis, mine string }

func (e errNoHarnessCPU) Error() string {
	return fmt.Sprintf("%s leaves the harness no CPU (it may run on %s): give Redis fewer, or start aebench with taskset on others", e.redis, e.mine)
}
