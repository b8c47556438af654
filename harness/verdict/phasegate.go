package verdict

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/stats"
)

// phaseAllowed is the form of a threshold scoped to a phase of the load
// profile.
const phaseAllowed = "PHASE: METRIC OP VALUE, VALUE a number, a duration for latencies, or for a rate N capacity " +
	"(recovery: catchup_s < 30, overload: completed_per_s > 0.95 capacity, burst: e2e.p99 < 2s)"

// phaseMetrics are the figures a phase-scoped threshold may name: the
// fields of runs[].phases[] in summary.json. A catch-up that never came
// and a ramp without a knee read as +Inf, so "< N" fails on the first and
// holds on the second only with ">".
func phaseMetrics() []Metric {
	rate := func(name, field, doc string, v func(p summary.PhaseResult) float64) Metric {
		return Metric{Name: name, Field: "phases[]." + field, Unit: "jobs/s", Kind: KindRate, Better: HigherIsBetter, Doc: doc,
			phase: func(p summary.PhaseResult) (float64, bool) { return v(p), true }}
	}
	lat := func(name, tag, q string) Metric {
		return Metric{Name: name, Field: "phases[].latency_ns." + tag + "." + q, Unit: "ns", Kind: KindDuration, Better: LowerIsBetter,
			Doc:   tag + " " + q + " over the phase's seconds",
			phase: func(p summary.PhaseResult) (float64, bool) { v, ok := p.LatencyNs[tag][q]; return v, ok }}
	}
	count := func(name, field string, v func(p summary.PhaseResult) float64) Metric {
		return Metric{Name: name, Field: "phases[]." + field, Unit: "jobs", Kind: KindCount, Better: LowerIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return v(p), true }}
	}
	never := func(v *float64) (float64, bool) {
		if v == nil {
			return 0, false
		}
		if *v < 0 {
			return math.Inf(1), true
		}
		return *v, true
	}
	return []Metric{
		rate("completed_per_s", "completed_per_s", "jobs completed per second in the phase", func(p summary.PhaseResult) float64 { return p.CompletedPerS }),
		rate("enqueued_per_s", "enqueued_per_s", "jobs the producers enqueued per second in the phase", func(p summary.PhaseResult) float64 { return p.EnqueuedPerS }),
		lat("e2e.p50", "e2e", "p50"), lat("e2e.p99", "e2e", "p99"), lat("queue_wait.p99", "queue_wait", "p99"),
		lat("lateness.p99", "lateness", "p99"), lat("schedule_lag.p99", "schedule_lag", "p99"),
		count("backlog_peak", "backlog_peak", func(p summary.PhaseResult) float64 { return float64(p.BacklogPeak) }),
		count("backlog_end", "backlog_end", func(p summary.PhaseResult) float64 { return float64(p.BacklogEnd) }),
		count("lost", "jobs.lost", func(p summary.PhaseResult) float64 { return float64(p.Jobs.Lost) }),
		count("duplicated", "jobs.duplicated_executions", func(p summary.PhaseResult) float64 { return float64(p.Jobs.Duplicated) }),
		count("early", "jobs.started_early", func(p summary.PhaseResult) float64 { return float64(p.Jobs.StartedEarly) }),
		{Name: "catchup_s", Field: "phases[].catch_up_s", Unit: "s", Kind: KindNumber, Better: LowerIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return never(p.CatchUpS) }},
		{Name: "knee_per_s", Field: "phases[].knee_per_s", Unit: "jobs/s", Kind: KindRate, Better: HigherIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return never(p.KneePerS) }},
		{Name: "completed_of_capacity", Field: "phases[].completed_of_capacity", Unit: "x", Kind: KindNumber, Better: HigherIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return p.OfCapacity, p.OfCapacity > 0 }},
		{Name: "cmds_per_job", Field: "phases[].commands_per_job", Unit: "cmds", Kind: KindNumber, Better: LowerIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return p.CommandsPerJob, p.CommandsPerJob > 0 }},
		{Name: "redis_cpu_us_per_job", Field: "phases[].redis_cpu_per_job_us", Unit: "µs", Kind: KindNumber, Better: LowerIsBetter,
			phase: func(p summary.PhaseResult) (float64, bool) { return p.RedisCPUPerJobUs, p.RedisCPUPerJobUs > 0 }},
	}
}

// PhaseMetricNames lists what a phase-scoped threshold may name.
func PhaseMetricNames() []string {
	var out []string
	for _, m := range phaseMetrics() {
		out = append(out, m.Name)
	}
	sort.Strings(out)
	return out
}

// parsePhaseThreshold parses `PHASE: METRIC OP VALUE [capacity]`; f are
// the expression's fields, the first the phase with its colon.
func parsePhaseThreshold(expr string, f []string) (Threshold, error) {
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("threshold %q: %s; allowed: %s", expr, fmt.Sprintf(format, a...), phaseAllowed)
	}
	phase := strings.TrimSuffix(f[0], ":")
	if phase == "" || len(f) < 4 || len(f) > 5 {
		return bad("want a phase, then METRIC OP VALUE")
	}
	i := slices.IndexFunc(phaseMetrics(), func(m Metric) bool { return m.Name == f[1] })
	if i < 0 {
		return bad("%q is not a phase metric; phase metrics: %s", f[1], strings.Join(PhaseMetricNames(), ", "))
	}
	m := phaseMetrics()[i]
	t := Threshold{Expr: expr, Metric: m, Op: f[2], Phase: phase}
	switch t.Op {
	case "<", "<=", ">", ">=":
	default:
		return bad("%q is not an operator", t.Op)
	}
	if len(f) == 5 {
		if f[4] != "capacity" || m.Kind != KindRate {
			return bad("%q after the value: only a rate takes a multiple of the capacity (0.95 capacity)", f[4])
		}
		t.OfCapacity = true
	}
	if m.Kind == KindDuration {
		d, err := parseValue(m, f[3])
		if err != nil {
			return bad("%v", err)
		}
		t.Limit = d
		return t, nil
	}
	v, err := strconv.ParseFloat(f[3], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("%q is not a value of %s (%s)", f[3], m.Name, m.Unit)
	}
	t.Limit = v
	return t, nil
}

// EvaluatePhases checks the phase-scoped thresholds against every job
// store's runs: per cell and backend, the median over the repeats of the
// phase's figure (the limit times each run's capacity for N capacity). A
// threshold no run could be checked against is reported unchecked.
func EvaluatePhases(ths []Threshold, runs []summary.RunSummary) []Crossing {
	var out []Crossing
	for _, t := range ths {
		if t.Phase == "" && !t.Mix {
			continue
		}
		vals, limits := map[stats.Key][]float64{}, map[stats.Key]float64{}
		var order []stats.Key
		for _, r := range runs {
			v, limit, ok := t.phaseValue(r)
			if !ok {
				continue
			}
			k := stats.Key{Cell: r.Cell, Backend: r.Label, Client: r.Client}
			if _, seen := vals[k]; !seen {
				order = append(order, k)
			}
			vals[k], limits[k] = append(vals[k], v), limit
		}
		if len(order) == 0 {
			msg := fmt.Sprintf("threshold %q cannot be checked: no job store's run has a phase %s with %s", t.Expr, t.Phase, t.Metric.Name)
			if t.Mix {
				msg = fmt.Sprintf("threshold %q cannot be checked: no job store's run measured %s (its jobs: or failure_windows: give it)", t.Expr, t.Metric.Name)
				if t.Policy != "" {
					msg = fmt.Sprintf("threshold %q cannot be checked: no job store's run under queue policy %s measured %s", t.Expr, t.Policy, t.Metric.Name)
				}
			}
			out = append(out, Crossing{Threshold: t.Expr, Metric: t.Metric.Name, Unchecked: true, Message: msg})
			continue
		}
		for _, k := range order {
			med := median(vals[k])
			lt := t
			lt.Limit = limits[k]
			if lt.holds(med) {
				continue
			}
			scope := "phase " + t.Phase + ": "
			if t.Mix {
				scope = ""
				if t.Policy != "" {
					scope = "queue policy " + t.Policy + ": "
				}
			}
			out = append(out, Crossing{Threshold: t.Expr, Group: k, Metric: t.Metric.Name, Value: Num(med), N: len(vals[k]),
				Message: fmt.Sprintf("threshold %q crossed: %s: %s%s is %s against %s (median of %d)", t.Expr, groupName(k), scope,
					t.Metric.Name, formatPhase(t.Metric, med), formatPhase(t.Metric, limits[k]), len(vals[k]))})
		}
	}
	return out
}

// phaseValue is run r's figure for t and the limit it is held to; false
// when r is a reference, has no such phase, or did not measure it.
func (t Threshold) phaseValue(r summary.RunSummary) (v, limit float64, ok bool) {
	if Reference(r.Kind) || r.Calibration || r.Status == summary.StatusNotApplicable || r.Status == summary.StatusError {
		return 0, 0, false
	}
	if t.Mix {
		if r.Mix == nil || t.Policy != "" && r.Mix.QueuePolicy != t.Policy {
			return 0, 0, false
		}
		v, ok = t.Metric.mix(r.Mix)
		return v, t.Limit, ok
	}
	i := slices.IndexFunc(r.Phases, func(p summary.PhaseResult) bool { return p.Name == t.Phase })
	if i < 0 {
		return 0, 0, false
	}
	if v, ok = t.Metric.phase(r.Phases[i]); !ok {
		return 0, 0, false
	}
	limit = t.Limit
	if t.OfCapacity {
		if r.Config.Producers.Capacity <= 0 {
			return 0, 0, false
		}
		limit *= r.Config.Producers.Capacity
	}
	return v, limit, true
}

func formatPhase(m Metric, v float64) string {
	if math.IsInf(v, 1) {
		return "never"
	}
	if m.Unit == "s" || m.Unit == "x" {
		return strconv.FormatFloat(v, 'g', 3, 64) + m.Unit
	}
	return m.Format(v)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
