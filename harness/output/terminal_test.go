package output

import (
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

// TestPrintScaling: the scaling table says how its projection is made.
func TestPrintScaling(t *testing.T) {
	var b strings.Builder
	printScaling(&b, []summary.ScalingPoint{{Backend: "zset", Masters: 1, Shards: 6, Throughput: 10000, Efficiency: 1}})
	if !strings.Contains(b.String(), "projection: a model") {
		t.Errorf("printScaling:\n%s", b.String())
	}
}

// TestDedupe: one reason that applies to several runs is said once.
func TestDedupe(t *testing.T) {
	got := dedupe([]string{"  a: not measured: restarted", "  b: not measured: restarted", "  c: other"})
	want := []string{"  a, b: not measured: restarted", "  c: other"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("dedupe = %q, want %q", got, want)
	}
}
