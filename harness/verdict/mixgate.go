package verdict

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
)

// mixAllowed is the form of a threshold on the job mix's figures.
const mixAllowed = "[POLICY:] tenant.FIGURE, storm.FIGURE, kind.NAME.FIGURE or queue.NAME.FIGURE OP VALUE (tenant.quiet_noisy_p95 < 2, tenant.jain > 0.9, " +
	"storm.first_attempt_p99_ratio < 3, kind.long.e2e.p99 < 2s, strict: queue.low.queue_wait.max > 10s), a POLICY scope checking the runs under that store.queue_policy only"

// mixMetrics are the figures of runs[].mix a threshold may name: the
// tenants' fairness and the storm's, and (mixKindMetrics) each kind's.
func mixMetrics() []Metric {
	num := func(name, field, doc string, better Direction, v func(m *summary.MixResult) (float64, bool)) Metric {
		return Metric{Name: name, Field: "mix." + field, Unit: "x", Kind: KindNumber, Better: better, Doc: doc,
			mix: v}
	}
	tenant := func(v func(t *summary.TenantFairness) float64) func(m *summary.MixResult) (float64, bool) {
		return func(m *summary.MixResult) (float64, bool) {
			if m.Tenants == nil {
				return 0, false
			}
			x := v(m.Tenants)
			return x, x > 0
		}
	}
	storm := func(v func(s *summary.StormResult) (float64, bool)) func(m *summary.MixResult) (float64, bool) {
		return func(m *summary.MixResult) (float64, bool) {
			if m.Storm == nil {
				return 0, false
			}
			return v(m.Storm)
		}
	}
	sumStorm := func(v func(g summary.GroupResult) int64) func(s *summary.StormResult) (float64, bool) {
		return func(s *summary.StormResult) (float64, bool) {
			return float64(v(s.Before) + v(s.During) + v(s.After)), true
		}
	}
	return []Metric{
		num("tenant.noisy_quiet_p95", "tenants.noisy_quiet_p95", "the noisy tenant's e2e p95 over the quiet tenants'", LowerIsBetter,
			tenant(func(t *summary.TenantFairness) float64 { return t.NoisyQuietP95 })),
		num("tenant.quiet_noisy_p95", "tenants.quiet_noisy_p95", "the quiet tenants' e2e p95 over the noisy tenant's", LowerIsBetter,
			tenant(func(t *summary.TenantFairness) float64 { return t.QuietNoisyP95 })),
		num("tenant.jain", "tenants.jain", "Jain's index over the tenants' normalised throughput", HigherIsBetter,
			tenant(func(t *summary.TenantFairness) float64 { return t.Jain })),
		num("tenant.min_share", "tenants.min_share", "the lowest tenant throughput share over its offered share", HigherIsBetter,
			tenant(func(t *summary.TenantFairness) float64 { return t.MinShare })),
		num("storm.first_attempt_p99_ratio", "storm.first_attempt_p99_ratio", "first attempts' queue-wait p99 during the failure windows over before", LowerIsBetter,
			storm(func(s *summary.StormResult) (float64, bool) {
				return s.FirstAttemptP99Ratio, s.FirstAttemptP99Ratio > 0
			})),
		num("storm.duplicate_completions", "storm.*.duplicate_completions", "jobs completed more than once, around the storm", LowerIsBetter,
			storm(sumStorm(func(g summary.GroupResult) int64 { return g.DuplicateCompletions }))),
		num("storm.lost", "storm.*.jobs.lost", "jobs lost, around the storm", LowerIsBetter,
			storm(sumStorm(func(g summary.GroupResult) int64 { return g.Jobs.Lost }))),
	}
}

// mixGroupFigures are the figures kind.NAME.FIGURE and queue.NAME.FIGURE
// may name.
func mixGroupFigures() []string {
	return []string{"e2e.p50", "e2e.p95", "e2e.p99", "e2e.max", "queue_wait.p50", "queue_wait.p95", "queue_wait.p99", "queue_wait.max",
		"lateness.p99", "lost", "duplicated", "dead_lettered", "share_of_done"}
}

// mixGroupMetric is kind.NAME.FIGURE or queue.NAME.FIGURE: one kind's or
// one queue's figure. share_of_done is the group's share of the jobs its
// run completed in the window, among the kinds or the queues.
func mixGroupMetric(name string) (Metric, bool) {
	prefix, rest, ok := strings.Cut(name, ".")
	if !ok || prefix != "kind" && prefix != "queue" {
		return Metric{}, false
	}
	groups := func(m *summary.MixResult) []summary.GroupResult {
		if prefix == "kind" {
			return m.Kinds
		}
		return m.Queues
	}
	for _, fig := range mixGroupFigures() {
		group, ok := strings.CutSuffix(rest, "."+fig)
		if !ok || group == "" {
			continue
		}
		m := Metric{Name: name, Field: "mix." + prefix + "s[name=" + group + "]", Unit: "jobs", Kind: KindCount, Better: LowerIsBetter,
			mix: func(m *summary.MixResult) (float64, bool) {
				gs := groups(m)
				i := slices.IndexFunc(gs, func(g summary.GroupResult) bool { return g.Name == group })
				if i < 0 {
					return 0, false
				}
				return groupFigure(gs, i, fig)
			}}
		switch {
		case fig == "share_of_done":
			m.Unit, m.Kind, m.Better = "x", KindNumber, HigherIsBetter
		case strings.Contains(fig, "."):
			m.Unit, m.Kind = "ns", KindDuration
		}
		return m, true
	}
	return Metric{}, false
}

// groupFigure is figure fig of gs[i].
func groupFigure(gs []summary.GroupResult, i int, fig string) (float64, bool) {
	g := gs[i]
	switch fig {
	case "lost":
		return float64(g.Jobs.Lost), true
	case "duplicated":
		return float64(g.Jobs.Duplicated), true
	case "dead_lettered":
		return float64(g.DeadLettered), true
	case "share_of_done":
		var done int64
		for _, o := range gs {
			done += o.CompletedInWindow
		}
		return float64(g.CompletedInWindow) / float64(max(done, 1)), done > 0
	}
	tag, q, _ := strings.Cut(fig, ".")
	v, ok := g.LatencyNs[tag][q]
	return v, ok
}

// MixMetricNames lists what a mix threshold may name.
func MixMetricNames() []string {
	var out []string
	for _, m := range mixMetrics() {
		out = append(out, m.Name)
	}
	sort.Strings(out)
	for _, f := range mixGroupFigures() {
		out = append(out, "kind.NAME."+f, "queue.NAME."+f)
	}
	return out
}

// isMixName says a threshold's metric is one of the job mix's.
func isMixName(name string) bool {
	for _, p := range []string{"tenant.", "storm.", "kind.", "queue."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// parseMixThreshold parses `tenant.jain > 0.9` and the like; f are the
// expression's three fields. policy scopes it to the runs under one
// store.queue_policy ("": all).
func parseMixThreshold(expr string, f []string, policy string) (Threshold, error) {
	bad := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("threshold %q: %s; allowed: %s", expr, fmt.Sprintf(format, a...), mixAllowed)
	}
	m, ok := mixGroupMetric(f[0])
	if !ok {
		i := slices.IndexFunc(mixMetrics(), func(m Metric) bool { return m.Name == f[0] })
		if i < 0 {
			return bad("%q is not a job-mix metric; they are: %s", f[0], strings.Join(MixMetricNames(), ", "))
		}
		m = mixMetrics()[i]
	}
	t := Threshold{Expr: expr, Metric: m, Op: f[1], Mix: true, Policy: policy}
	switch t.Op {
	case "<", "<=", ">", ">=":
	default:
		return bad("%q is not an operator", t.Op)
	}
	if strings.HasSuffix(f[2], "%") {
		return bad("a job-mix threshold takes an absolute value, not a change against a baseline")
	}
	v, err := parseValue(m, f[2])
	if err != nil {
		return bad("%v", err)
	}
	t.Limit = v
	return t, nil
}
