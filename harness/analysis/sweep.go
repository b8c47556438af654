package analysis

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/stats"
)

// sweptFields lists the scenario fields that vary across cells with
// numeric values only: each gets figures of every sweep metric against it.
func SweptFields(groups []stats.Group) []string {
	vals := map[string]map[string]bool{}
	numeric := map[string]bool{}
	for _, g := range groups {
		for _, v := range g.Vary {
			k, val, ok := strings.Cut(v, "=")
			if !ok {
				continue
			}
			if vals[k] == nil {
				vals[k] = map[string]bool{}
				numeric[k] = true
			}
			vals[k][val] = true
			if _, ok := SweepX(val); !ok {
				numeric[k] = false
			}
		}
	}
	var out []string
	for k, vs := range vals {
		if numeric[k] && len(vs) > 1 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// sweepLine reads a group of a sweep over field: its value of the field,
// and the line it belongs to (the backend and the other varied fields).
func SweepLine(g stats.Group, field string) (val, line string, found bool) {
	line = g.Backend
	for _, v := range g.Vary {
		k, x, _ := strings.Cut(v, "=")
		if k == field {
			val, found = x, true
			continue
		}
		line += " " + v
	}
	return val, line, found
}

// sweepX reads a swept value as a point on the x axis: a number, or a
// duration in milliseconds (a bucket width, a poll interval).
func SweepX(val string) (float64, bool) {
	if x, err := strconv.ParseFloat(val, 64); err == nil {
		return x, true
	}
	if d, err := time.ParseDuration(val); err == nil {
		return float64(d) / float64(time.Millisecond), true
	}
	return 0, false
}
