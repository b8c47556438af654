package health

import (
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's times: USER_HZ (sysconf(_SC_CLK_TCK),
// proc(5)), 100 on the architectures Go builds for on Linux.
const userHZ = 100

// parseSteal reads /proc/stat's text: the steal field (the eighth number)
// of the "cpu" line, which sums every CPU, and the number of "cpuN" lines.
func parseSteal(stat string) (time.Duration, int, bool) {
	var steal time.Duration
	cpus, found := 0, false
	for _, line := range strings.Split(stat, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cpus++
			continue
		}
		if len(f) < 9 {
			return 0, 0, false
		}
		ticks, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		steal, found = time.Duration(ticks)*time.Second/userHZ, true
	}
	if !found || cpus == 0 {
		return 0, 0, false
	}
	return steal, cpus, true
}
