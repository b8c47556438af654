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

// TestMedian: an even count takes the mean of the two middle values, so a
// median of two repeats is not their max.
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{9024, 8986}, 9005}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
