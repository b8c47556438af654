package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/report"
	"github.com/aebench/aebench/stats"
)

// sweepMetrics are the metrics drawn against a swept field, with the
// figure's y label and the factor from the stored unit.
var sweepMetrics = []struct {
	metric, file, label string
	scale               float64
}{
	{"throughput", "throughput", "jobs/s", 1},
	{"e2e.p99", "e2e_p99", "e2e p99 (ms)", 1e-6},
	{"lateness.p99", "lateness_p99", "lateness p99 (ms)", 1e-6},
	{"claim.p99", "claim_p99", "claim call p99 (ms)", 1e-6},
	{"redis_cpu_us_per_job", "redis_cpu", "Redis CPU per job (µs)", 1},
	{"busiest_master_cpu_us_per_job", "busiest_master_cpu", "busiest Redis server's CPU per job (µs)", 1},
	{"cmds_per_job", "cmds", "Redis commands per job", 1},
	{"memory_per_job", "memory", "Redis memory per job (B)", 1},
}

// sweptFields lists the scenario fields that vary across cells with
// numeric values only: each gets figures of every sweep metric against it.
func sweptFields(groups []stats.Group) []string {
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
			if _, ok := sweepX(val); !ok {
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

// sweepX reads a swept value as a point on the x axis: a number, or a
// duration in milliseconds (a bucket width, a poll interval).
func sweepX(val string) (float64, bool) {
	if x, err := strconv.ParseFloat(val, 64); err == nil {
		return x, true
	}
	if d, err := time.ParseDuration(val); err == nil {
		return float64(d) / float64(time.Millisecond), true
	}
	return 0, false
}

// sweepAxis labels the x axis: the field, with "(ms)" when its values are
// durations.
func sweepAxis(groups []stats.Group, field string) string {
	for _, g := range groups {
		for _, v := range g.Vary {
			if k, val, _ := strings.Cut(v, "="); k == field {
				if _, err := strconv.ParseFloat(val, 64); err != nil {
					return field + " (ms)"
				}
				return field
			}
		}
	}
	return field
}

// sweepPlots writes, for every numeric swept field, one figure per sweep
// metric: x the field, a line per backend (and per value of the other
// varied fields), the median over the repeats with its 95% CI as bars.
// The floor and asynq are drawn like the job stores; the calibration is
// not in the statistics.
func (pr *planRunner) sweepPlots() error {
	blk := pr.sum.Statistics
	if blk == nil {
		return nil
	}
	var errs []error
	for _, field := range sweptFields(blk.Groups) {
		for _, m := range sweepMetrics {
			series := sweepSeries(blk.Groups, field, m.metric, m.scale)
			if len(series) == 0 {
				continue
			}
			name := filepath.Join(pr.dir, "sweep-"+strings.ReplaceAll(field, ".", "_")+"-"+m.file)
			title := fmt.Sprintf("%s against %s - %s", m.label, field, pr.s.Name)
			if err := report.SweepPlot(name, title, pr.sweepConditions(), sweepAxis(blk.Groups, field), m.label, series); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// sweepSeries builds one line per backend and combination of the other
// varied fields, points sorted by the swept value.
func sweepSeries(groups []stats.Group, field, metric string, scale float64) []report.SweepSeries {
	type point struct{ x, y, lo, hi float64 }
	lines := map[string][]point{}
	var order []string
	for _, g := range groups {
		st, ok := g.Metric(metric)
		if !ok {
			continue
		}
		val, label, found := sweepLine(g, field)
		if !found {
			continue
		}
		x, _ := sweepX(val)
		p := point{x: x, y: st.Median * scale, lo: st.Median * scale, hi: st.Median * scale}
		if st.CI != nil {
			p.lo, p.hi = st.CI.Lo*scale, st.CI.Hi*scale
		}
		if _, seen := lines[label]; !seen {
			order = append(order, label)
		}
		lines[label] = append(lines[label], p)
	}
	var out []report.SweepSeries
	for _, label := range order {
		pts := lines[label]
		sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		s := report.SweepSeries{Label: label}
		for _, p := range pts {
			s.X, s.Y, s.Lo, s.Hi = append(s.X, p.x), append(s.Y, p.y), append(s.Lo, p.lo), append(s.Hi, p.hi)
		}
		out = append(out, s)
	}
	return out
}

// sweepLine reads a group of a sweep over field: its value of the field,
// and the line it belongs to (the backend and the other varied fields).
func sweepLine(g stats.Group, field string) (val, line string, found bool) {
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

// sweepConditions is the plan's conditions without the swept values: the
// first cell's short conditions, which name its own values of the swept
// fields, so the caption says "the rest as in this cell".
func (pr *planRunner) sweepConditions() string {
	if len(pr.sum.Runs) == 0 {
		return ""
	}
	return "other settings as in cell 1: " + pr.sum.Runs[0].Config.ShortConditions("")
}
