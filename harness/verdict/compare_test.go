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
