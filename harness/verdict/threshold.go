package verdict

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/stats"
)

// Threshold is one gate: absolute (`e2e.p99 < 20ms`: the group's median
// must satisfy it) or relative (`e2e.p99:+10%`, or `e2e.p99 < +10%` in a
// scenario: compared with a baseline, the metric may not get worse by more
// than Pct percent with significance).
type Threshold struct {
	// Expr is the expression as written.
	Expr   string
	Metric Metric
	// Relative thresholds have Pct; absolute ones Op and Limit (in the
	// metric's stored unit: ns for latencies).
	Relative bool
	Pct      float64 // > 0: the allowed change in the worse direction
	Op       string  // <, <=, >, >=
	Limit    float64
	// Phase scopes the threshold to a phase of the load profile
	// (`recovery: catchup_s < 30`, phasegate.go); Metric is then a phase
	// metric. OfCapacity: Limit is a multiple of the run's capacity.
	Phase      string
	OfCapacity bool
	// Mix: the metric is one of the job mix's (runs[].mix, mixgate.go),
	// checked per run like a phase's.
	Mix bool
	// Policy scopes a mix threshold to the runs under one
	// store.queue_policy (`strict: queue.low.queue_wait.max > 10s`).
	Policy string
}

const (
	failOnAllowed = "METRIC:+N% (a metric where lower is better, e.g. e2e.p99:+10%) or METRIC:-N% " +
		"(higher is better, e.g. throughput:-5%)"
	thresholdAllowed = "METRIC OP VALUE with OP one of <, <=, >, >= and VALUE a duration for latencies " +
		"(e2e.p99 < 20ms), a number otherwise (throughput > 10000, redis_cpu_us_per_job < 40), " +
		"or a signed percentage relative to a baseline (e2e.p99 < +10%); or scoped to a phase, " + phaseAllowed + "; or on the job mix, " + mixAllowed
)

// ParseFailOn parses a --fail-on flag: `e2e.p99:+10%` fails a comparison
// when e2e p99 gets significantly worse by more than 10%. The sign is the
// worse direction of the metric: + where lower is better, - where higher is.
func ParseFailOn(expr string) (Threshold, error) {
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("--fail-on %q: %s; allowed: %s", expr, fmt.Sprintf(format, a...), failOnAllowed)
	}
	name, pct, ok := strings.Cut(strings.TrimSpace(expr), ":")
	if !ok {
		return bad("no ':' between the metric and the change")
	}
	m, err := Lookup(strings.TrimSpace(name))
	if err != nil {
		return bad("%v", err)
	}
	t, err := relative(m, strings.TrimSpace(pct))
	if err != nil {
		return bad("%v", err)
	}
	t.Expr = expr
	return t, nil
}

// relative parses a signed percentage in the metric's worse direction.
func relative(m Metric, s string) (Threshold, error) {
	if !strings.HasSuffix(s, "%") || len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return Threshold{}, fmt.Errorf("%q is not a signed percentage like +10%% or -5%%", s)
	}
	v, err := strconv.ParseFloat(s[1:len(s)-1], 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Threshold{}, fmt.Errorf("%q is not a positive percentage", s)
	}
	worse := worseSign(m)
	if s[:1] != worse {
		return Threshold{}, fmt.Errorf("%s is %s-is-better, so a regression is a change of sign %s (%s%g%%), not %s",
			m.Name, m.Better, worse, worse, v, s)
	}
	return Threshold{Metric: m, Relative: true, Pct: v}, nil
}

// ParseThreshold parses one k6-style expression of a scenario's thresholds
// block: `e2e.p99 < 20ms`, `throughput > 10000`, `redis_cpu_us_per_job < 40`,
// or relative to a baseline, `e2e.p99 < +10%`.
func ParseThreshold(expr string) (Threshold, error) {
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("threshold %q: %s; allowed: %s", expr, fmt.Sprintf(format, a...), thresholdAllowed)
	}
	f := strings.Fields(expr)
	if len(f) == 4 && strings.HasSuffix(f[0], ":") && isMixName(f[1]) {
		policy := strings.TrimSuffix(f[0], ":")
		if !slices.Contains([]string{"strict", "weighted", "round_robin"}, policy) {
			return bad("%q scopes a job-mix threshold: allowed scopes are the queue policies strict, weighted, round_robin", policy)
		}
		return parseMixThreshold(expr, f[1:], policy)
	}
	if len(f) > 0 && strings.HasSuffix(f[0], ":") {
		return parsePhaseThreshold(expr, f)
	}
	if len(f) != 3 {
		return bad("want three parts, METRIC OP VALUE, separated by spaces; got %d", len(f))
	}
	if isMixName(f[0]) {
		return parseMixThreshold(expr, f, "")
	}
	m, err := Lookup(f[0])
	if err != nil {
		return bad("%v", err)
	}
	op := f[1]
	switch op {
	case "<", "<=", ">", ">=":
	default:
		return bad("%q is not an operator", op)
	}
	if strings.HasSuffix(f[2], "%") {
		t, err := relative(m, f[2])
		if err != nil {
			return bad("%v", err)
		}
		if (m.Better == LowerIsBetter) != strings.HasPrefix(op, "<") {
			return bad("a relative limit on %s (%s is better) is written with %s", m.Name, m.Better,
				map[bool]string{true: "< or <=", false: "> or >="}[m.Better == LowerIsBetter])
		}
		t.Expr, t.Op = expr, op
		return t, nil
	}
	limit, err := parseValue(m, f[2])
	if err != nil {
		return bad("%v", err)
	}
	return Threshold{Expr: expr, Metric: m, Op: op, Limit: limit}, nil
}

// ParseThresholds parses a scenario's thresholds block; where names the
// file (and field) for the error.
func ParseThresholds(where string, exprs []string) ([]Threshold, error) {
	out := make([]Threshold, 0, len(exprs))
	for i, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, fmt.Errorf("%s: thresholds[%d]: %w", where, i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func parseValue(m Metric, s string) (float64, error) {
	if m.Kind == KindDuration {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s is a latency: %q is not a duration (write e.g. 500µs, 20ms, 1s)", m.Name, s)
		}
		return float64(d.Nanoseconds()), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a number (%s is in %s)", s, m.Name, m.Unit)
	}
	return v, nil
}

// holds says whether v satisfies an absolute threshold.
func (t Threshold) holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Limit
	case "<=":
		return v <= t.Limit
	case ">":
		return v > t.Limit
	}
	return v >= t.Limit
}

// Crossing is a threshold a group crossed.
type Crossing struct {
	Threshold string    `json:"threshold"`
	Group     stats.Key `json:"group"`
	Metric    string    `json:"metric"`
	// Value is the median over the repeats (absolute) or the change in
	// percent (relative); CI its 95% interval when there is one.
	Value Num             `json:"value"`
	CI    *stats.Interval `json:"ci95,omitempty"`
	N     int             `json:"n"`
	// Message says it all in one line, for a log.
	Message string `json:"message"`
	// Unchecked: no group measured the metric, so the gate could not be
	// checked (it fails rather than pass silently).
	Unchecked bool `json:"unchecked,omitempty"`
}

// Evaluate checks absolute thresholds against a statistics block: a
// threshold is crossed by a group whose median breaks it. Relative
// thresholds need a baseline and are left to Compare. A threshold on a
// metric no group measured is reported too: a gate that cannot be checked
// must not pass silently.
func Evaluate(ths []Threshold, b *stats.Block) []Crossing {
	var out []Crossing
	for _, t := range ths {
		if t.Relative || t.Phase != "" || t.Mix {
			continue
		}
		seen := false
		for _, g := range b.Groups {
			if Reference(g.Kind) {
				continue
			}
			st, ok := g.Metric(t.Metric.Name)
			if !ok {
				continue
			}
			seen = true
			if t.holds(st.Median) {
				continue
			}
			c := Crossing{Threshold: t.Expr, Group: g.Key(), Metric: t.Metric.Name, Value: Num(st.Median), CI: st.CI, N: st.N}
			c.Message = fmt.Sprintf("threshold %q crossed: %s: %s is %s (median of %d%s)", t.Expr, groupName(c.Group),
				t.Metric.Name, t.Metric.Format(st.Median), st.N, ciText(t.Metric, st.CI))
			out = append(out, c)
		}
		if !seen {
			out = append(out, Crossing{Threshold: t.Expr, Metric: t.Metric.Name, Unchecked: true,
				Message: fmt.Sprintf("threshold %q cannot be checked: no run measured %s", t.Expr, t.Metric.Name)})
		}
	}
	return out
}

func ciText(m Metric, ci *stats.Interval) string {
	if ci == nil {
		return ", no 95% CI"
	}
	return fmt.Sprintf(", 95%% CI %s to %s", m.Format(ci.Lo), m.Format(ci.Hi))
}

func groupName(k stats.Key) string {
	return fmt.Sprintf("cell %d %s (%s)", k.Cell, k.Backend, k.Client)
}

// ScenarioFailOn is the relative entries of NEW's scenario thresholds
// block (`e2e.p99 < +10%`), which compare gates on as it does --fail-on.
func ScenarioFailOn(s *Set) ([]Threshold, error) {
	var out []Threshold
	for i, e := range s.Thresholds {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, fmt.Errorf("%s: scenario thresholds[%d]: %w", s.Source, i, err)
		}
		if t.Relative {
			out = append(out, t)
		}
	}
	return out, nil
}
