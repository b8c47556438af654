package health

import (
	"testing"
	"time"
)

// TestParseSteal reads /proc/stat's layout (proc(5)): the eighth number of
// the "cpu" line, in USER_HZ, and the per-CPU lines counted.
func TestParseSteal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stat  string
		steal time.Duration
		cpus  int
		ok    bool
	}{
		{"two CPUs", "cpu  3046000 3220 735269 5473702 20326 0 178649 133367 0 0\ncpu0 1 2 3 4 5 6 7 60000 0 0\ncpu1 1 2 3 4 5 6 7 73367 0 0\nintr 1 2\n",
			1333670 * time.Millisecond, 2, true},
		{"no steal field (old kernel)", "cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", 0, 0, false},
		{"no per-CPU lines", "cpu  1 2 3 4 5 6 7 8 0 0\n", 0, 0, false},
		{"empty", "", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steal, cpus, ok := parseSteal(tc.stat)
			if steal != tc.steal || cpus != tc.cpus || ok != tc.ok {
				t.Fatalf("parseSteal = %v, %d, %v; want %v, %d, %v", steal, cpus, ok, tc.steal, tc.cpus, tc.ok)
			}
		})
	}
}
