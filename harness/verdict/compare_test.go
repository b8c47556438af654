package verdict

import (
	"slices"
	"testing"
)

func TestSplitConditions(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"open loop 1000 jobs/s, handler uniform(50ms, 500ms), client go-redis", []string{"open loop 1000 jobs/s", "handler uniform(50ms, 500ms)", "client go-redis"}},
		{"a", []string{"a"}},
		{"x (1, 2), y", []string{"x (1, 2)", "y"}},
	} {
		if got := splitConditions(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("splitConditions(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestEnvDiffs(t *testing.T) {
	base := Env{CPUModel: "AMD EPYC", Kernel: "6.1", GoVersion: "go1.26.8", Modules: map[string]string{"github.com/redis/go-redis/v9": "v9.23.0"}}
	for _, tc := range []struct {
		name string
		n    Env
		want int
	}{
		{"same", base, 0},
		{"other CPU and kernel", Env{CPUModel: "Intel Xeon", Kernel: "6.8", GoVersion: "go1.26.8", Modules: base.Modules}, 2},
		{"other go-redis", Env{CPUModel: "AMD EPYC", Kernel: "6.1", GoVersion: "go1.26.8", Modules: map[string]string{"github.com/redis/go-redis/v9": "v9.24.0"}}, 1},
		{"not recorded (an older file)", Env{GoVersion: "go1.26.8"}, 0},
	} {
		if got := envDiffs(base, tc.n); len(got) != tc.want {
			t.Errorf("%s: envDiffs = %q, want %d differences", tc.name, got, tc.want)
		}
	}
}
