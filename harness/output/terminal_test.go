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
