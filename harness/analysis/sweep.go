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

// Lines gathers points under line labels, keeping the order in which the
// labels first come (a plan's order): a sweep's lines, or runs under reasons.
type Lines[T any] struct {
	Order []string
	By    map[string][]T
}

// Add appends p to the line called label.
func (l *Lines[T]) Add(label string, p T) {
	if l.By == nil {
		l.By = map[string][]T{}
	}
	if _, seen := l.By[label]; !seen {
		l.Order = append(l.Order, label)
	}
	l.By[label] = append(l.By[label], p)
}

// Sorted returns each line's points sorted by less, in the labels' order.
func (l *Lines[T]) Sorted(less func(a, b T) bool) [][]T {
	out := make([][]T, 0, len(l.Order))
	for _, label := range l.Order {
		pts := l.By[label]
		sort.Slice(pts, func(i, j int) bool { return less(pts[i], pts[j]) })
		out = append(out, pts)
	}
	return out
}
