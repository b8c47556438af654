package conditions

import (
	"os"
	"sort"
	"strconv"
	"strings"
)

// ParseCPUList reads a CPU list as Linux and redis-server's
// server_cpulist write it ("0-2,5": CPUs 0, 1, 2 and 5).
func ParseCPUList(v string) (map[int]bool, bool) {
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

// OnlineCPUs is the machine's online CPUs (/sys/devices/system/cpu/online),
// whatever this process's affinity; false where Linux does not say.
func OnlineCPUs() (map[int]bool, string, bool) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, "", false
	}
	text := strings.TrimSpace(string(b))
	set, ok := ParseCPUList(text)
	return set, text, ok
}

// FormatCPUList writes a set of CPUs as a list ("0,2-3").
func FormatCPUList(set map[int]bool) string {
	var cs []int
	for c, in := range set {
		if in {
			cs = append(cs, c)
		}
	}
	sort.Ints(cs)
	var parts []string
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1] == cs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cs[i]))
		} else {
			parts = append(parts, strconv.Itoa(cs[i])+"-"+strconv.Itoa(cs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
