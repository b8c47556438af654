package runner

import "testing"

func TestDriftVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []float64
		want string
	}{
		{"flat", []float64{100, 101, 99, 100, 102, 100}, "holds"},
		{"a steady rise to 2x", []float64{100, 120, 140, 160, 180, 200}, "drifts"},
		{"noise that ends high", []float64{100, 30, 190, 20, 170, 140}, "unclear"},
		{"a slow rise within the threshold", []float64{100, 102, 104, 106, 108, 110}, "holds"},
		{"nothing in the first window", []float64{0, 10, 10}, "not measured"},
		{"too few windows", []float64{1, 2}, "not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := driftVerdict("m", tc.vs)
			if v.Word != tc.want {
				t.Errorf("%v: %s (ratio %.2f, interval %.2f-%.2f), want %s", tc.vs, v.Word, v.Ratio, v.Lo, v.Hi, tc.want)
			}
		})
	}
}
