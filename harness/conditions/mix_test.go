package conditions

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"
)

func TestTenantDraws(t *testing.T) {
	for _, tc := range []struct {
		spec string
		// t0's share of the draws, and its expected share (Offered).
		t0 float64
	}{
		{"uniform(4)", 0.25},
		{"noisy(100, 0.5)", 0.5},
		{"zipf(20, 1.1)", 0},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			ten, err := ParseTenants(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			c := Config{Seed: 7, Jobs: []JobKind{{Name: "k", Share: 1, Tenants: ten}}}
			c.PrepareMix()
			want := ten.Offered(0)
			if tc.t0 > 0 && math.Abs(want-tc.t0) > 1e-9 {
				t.Errorf("Offered(0) = %g, want %g", want, tc.t0)
			}
			const n = 40000
			counts := make([]int, ten.N)
			for i := range n {
				_, tenant := c.Class("p0-" + strconv.Itoa(i))
				counts[tenant]++
			}
			var sum float64
			for i := range ten.N {
				sum += ten.Offered(i)
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("offered shares sum to %g", sum)
			}
			if got := float64(counts[0]) / n; math.Abs(got-want) > 0.02 {
				t.Errorf("t0 drew %.3f of the jobs, want %.3f", got, want)
			}
			if got, want := float64(counts[ten.N-1])/n, ten.Offered(ten.N-1); math.Abs(got-want) > 0.02 {
				t.Errorf("t%d drew %.3f of the jobs, want %.3f", ten.N-1, got, want)
			}
		})
	}
}

func TestParseTenantsRejects(t *testing.T) {
	for _, s := range []string{"uniform(0)", "uniform(2.5)", "zipf(10)", "zipf(10, 0)", "noisy(1, 0.5)", "noisy(10, 1)", "pareto(3)", "uniform", "uniform(20000)"} {
		if _, err := ParseTenants(s); err == nil {
			t.Errorf("%q parsed; want an error", s)
		}
	}
}

func TestFormatBound(t *testing.T) {
	for d, want := range map[time.Duration]string{10 * time.Second: "10s", time.Minute: "1m", 24 * time.Hour: "24h", 90 * time.Second: "1m30s", 0: "0s"} {
		if got := FormatBound(d); got != want {
			t.Errorf("FormatBound(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestKindsSurviveJSON: a worker process gets the run's Config as JSON,
// which keeps a kind's handler and delay as text only; rebuilt, they draw
// what the coordinator's do (a zero handler would run every job in no time).
func TestKindsSurviveJSON(t *testing.T) {
	h, _ := ParseDist("uniform(2ms, 4ms)")
	d, _ := ParseDist("exponential(1s)")
	ten, _ := ParseTenants("zipf(50, 1.2)")
	c := Config{Seed: 3, Jobs: []JobKind{{Name: "k", Share: 1, Handler: h, HandlerText: h.String(), Delay: d, DelayText: d.String(), Tenants: ten}}}
	c.PrepareMix()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got Config
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := got.RebuildPhaseHandlers(); err != nil {
		t.Fatal(err)
	}
	if got.Jobs[0].Handler != h || got.Jobs[0].Delay != d {
		t.Errorf("rebuilt handler %v delay %v, want %v and %v", got.Jobs[0].Handler, got.Jobs[0].Delay, h, d)
	}
	for i := range 100 {
		id := "p1-" + strconv.Itoa(i)
		k1, t1 := c.Class(id)
		if k2, t2 := got.Class(id); k1 != k2 || t1 != t2 {
			t.Fatalf("%s: class (%d, %d) after JSON, (%d, %d) before", id, k2, t2, k1, t1)
		}
	}
}
