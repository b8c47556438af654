package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/stats"
)

// keepPace: a rate is sustained when completions are at least this share
// of the offered rate (the backlog is not growing).
const KeepPace = 0.95

// maxSustainable finds, per backend, the highest offered rate (over the
// cells that sweep producers.rate) whose median e2e p99 stays under the
// scenario's slo.e2e_p99 while completions keep pace; nil without an SLO
// or without a rate sweep.
func MaxSustainable(sum *summary.Summary, bound time.Duration) []summary.SLOResult {
	if bound <= 0 || sum.Statistics == nil {
		return nil
	}
	type point struct {
		rate, p99, done float64
	}
	byBackend := map[string][]point{}
	var order []string
	for _, g := range sum.Statistics.Groups {
		rate, ok := variedRate(g)
		if !ok {
			continue
		}
		p99, ok1 := g.Metric("e2e.p99")
		done, ok2 := g.Metric("throughput")
		if !ok1 || !ok2 {
			continue
		}
		if _, seen := byBackend[g.Backend]; !seen {
			order = append(order, g.Backend)
		}
		byBackend[g.Backend] = append(byBackend[g.Backend], point{rate, p99.Median, done.Median})
	}
	var out []summary.SLOResult
	for _, b := range order {
		pts := byBackend[b]
		sort.Slice(pts, func(i, j int) bool { return pts[i].rate < pts[j].rate })
		r := summary.SLOResult{Backend: b, BoundNs: bound.Nanoseconds()}
		for _, p := range pts {
			r.Tested = append(r.Tested, p.rate)
			if p.p99 <= float64(bound.Nanoseconds()) && p.done >= KeepPace*p.rate {
				r.MaxRate = p.rate
			} else if r.FirstMiss == 0 {
				r.FirstMiss = p.rate
				r.Why = fmt.Sprintf("at %g jobs/s: e2e p99 %s, %.0f jobs/s completed", p.rate, verdict.FormatNs(p.p99), p.done)
			}
		}
		out = append(out, r)
	}
	return out
}

// variedRate is the producers.rate a group's cell swept, if it swept one.
func variedRate(g stats.Group) (float64, bool) {
	for _, v := range g.Vary {
		if k, val, ok := strings.Cut(v, "="); ok && k == "producers.rate" {
			f, err := strconv.ParseFloat(val, 64)
			return f, err == nil
		}
	}
	return 0, false
}
