package conditions

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DistAllowed is the text error messages and the scenario README give for a
// distribution field.
const DistAllowed = "a duration (constant), constant(d), uniform(min, max), exponential(mean), normal(mean, stddev)"

// Dist is a distribution of durations: a handler's run time, a delayed job's
// delay. It is sampled from a uniform number the caller draws, so that a
// per-job hash gives every backend of a run the very same durations.
type Dist struct {
	Kind string // constant, uniform, exponential, normal
	A, B time.Duration
}

// ParseDist reads the scenario syntax: "1ms", "constant(1ms)",
// "uniform(200ms, 2s)", "exponential(1ms)" (mean), "normal(10ms, 2ms)"
// (truncated at 0).
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		d, err := parseNonNegDuration(s)
		if err != nil {
			return Dist{}, fmt.Errorf("%q is not a distribution: %v", s, err)
		}
		return Dist{Kind: "constant", A: d}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("%q: missing closing parenthesis", s)
	}
	kind := strings.TrimSpace(s[:open])
	var args []time.Duration
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		d, err := parseNonNegDuration(strings.TrimSpace(a))
		if err != nil {
			return Dist{}, fmt.Errorf("%q: %v", s, err)
		}
		args = append(args, d)
	}
	want := map[string]int{"constant": 1, "uniform": 2, "exponential": 1, "normal": 2}
	n, ok := want[kind]
	if !ok {
		return Dist{}, fmt.Errorf("%q: unknown distribution %q", s, kind)
	}
	if len(args) != n {
		return Dist{}, fmt.Errorf("%q: %s takes %d argument(s), got %d", s, kind, n, len(args))
	}
	d := Dist{Kind: kind, A: args[0]}
	if n == 2 {
		d.B = args[1]
	}
	if kind == "uniform" && d.B < d.A {
		return Dist{}, fmt.Errorf("%q: uniform needs min <= max", s)
	}
	return d, nil
}

func parseNonNegDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (write e.g. 500us, 1ms, 2s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	if d > maxDistDuration {
		return 0, fmt.Errorf("duration %q is above the maximum %s", s, FormatBound(maxDistDuration))
	}
	return d, nil
}

// maxDistDuration bounds a distribution's parameters: a handler or delay
// longer than the longest run is a typo.
const maxDistDuration = 24 * time.Hour

// Bound is the longest duration the distribution gives, and true; for an
// unbounded one (exponential, normal) it is the 99.9th percentile, and
// false.
func (d Dist) Bound() (time.Duration, bool) {
	switch d.Kind {
	case "uniform":
		return d.B, true
	case "exponential":
		return time.Duration(-math.Log(0.001) * float64(d.A)), false
	case "normal":
		return d.A + time.Duration(3.09*float64(d.B)), false
	}
	return d.A, true
}

// String gives the scenario syntax back.
func (d Dist) String() string {
	switch d.Kind {
	case "", "constant":
		return d.A.String()
	case "uniform", "normal":
		return fmt.Sprintf("%s(%s, %s)", d.Kind, d.A, d.B)
	}
	return fmt.Sprintf("%s(%s)", d.Kind, d.A)
}

// Mean is the distribution's mean (normal: ignoring the truncation at 0).
func (d Dist) Mean() time.Duration {
	if d.Kind == "uniform" {
		return (d.A + d.B) / 2
	}
	return d.A
}

// Sample maps two independent uniform numbers in [0,1) to a duration.
func (d Dist) Sample(u1, u2 float64) time.Duration {
	switch d.Kind {
	case "uniform":
		return d.A + time.Duration(u1*float64(d.B-d.A))
	case "exponential":
		return time.Duration(-math.Log(1-u1) * float64(d.A))
	case "normal":
		// Box-Muller; 1-u1 is in (0,1] so the log is finite.
		z := math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
		v := float64(d.A) + z*float64(d.B)
		if v < 0 {
			v = 0
		}
		return time.Duration(v)
	}
	return d.A
}

// ParseSize reads a byte count: 256, 1KiB, 4KB, 1MiB.
func ParseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult := 1
	for _, u := range []struct {
		suf string
		m   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"KB", 1000}, {"MB", 1000 * 1000}, {"B", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suf)), u.m
			break
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// FormatBound writes a bound as people write it: 24h, not 24h0m0s.
func FormatBound(d time.Duration) string {
	s := d.String()
	// Only a zero minutes or seconds field after a larger unit goes: 10s
	// stays 10s.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
