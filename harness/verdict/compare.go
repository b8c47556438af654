package verdict

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/aebench/aebench/stats"
)

// Verdicts of one metric.
const (
	Better   = "better"
	Worse    = "worse"
	NoChange = "no change"
	TooNoisy = "too noisy"
)

// Defaults of CompareOptions.
const (
	// DefaultAlpha is the false-alarm rate of the whole gate: the
	// Mann-Whitney U tests of the gated metrics share it (Bonferroni), so
	// that two result sets of the same code fail the gate at most 5% of
	// the time however many backends and metrics are gated.
	DefaultAlpha = 0.05
	// DefaultNoiseFloor is the smallest change called better or worse,
	// even when significant: CI gates in practice fail on about 10%.
	DefaultNoiseFloor = 0.10
)

// CompareOptions configure Compare; the zero value means the defaults.
type CompareOptions struct {
	Alpha      float64 // default DefaultAlpha
	NoiseFloor float64 // a fraction; default DefaultNoiseFloor
	// Force compares groups whose conditions differ, and incomplete sets.
	Force bool
	// StrictHealth: a comparison that rests on a suspect run (either side)
	// exits ExitSuspect instead of deciding.
	StrictHealth bool
	// FailOn are relative thresholds: each gates its metric at its own
	// limit, beside the catalog's Gate metrics, which gate at the noise
	// floor unless a threshold names them (a --fail-on adds a gate or
	// sets one's limit; it never removes the defaults).
	FailOn []Threshold
	// Loosened lists the gates a --fail-on loosened under --loosen
	// (CheckFailOn), for the verdict to print.
	Loosened []string
}

// Comparison is what Compare found.
type Comparison struct {
	Base, New  string // sources
	Alpha      float64
	NoiseFloor float64
	// GatedTests is how many (group, metric) tests share Alpha;
	// PerTestAlpha = Alpha / GatedTests.
	GatedTests   int
	PerTestAlpha float64
	Pairs        []Pair
	// Loosened: gates loosened under --loosen, printed with the verdict.
	Loosened []string
	// Refused: groups whose conditions differ (not compared unless Force).
	Refused []Refusal
	// OnlyBase, OnlyNew: groups with no partner.
	OnlyBase, OnlyNew []stats.Key
	// Incomplete names a set whose run did not finish.
	Incomplete []string
	// Incorrect lists the runs of NEW that failed their correctness checks.
	Incorrect []string
	// Regressions are the gated metrics that got worse beyond their limit.
	Regressions []Crossing
	Forced      bool
	// Suspect lists the compared runs, of either side, whose measurement
	// health was suspect ("NEW r1-zset: <reasons>"); StrictHealth makes
	// them decide the exit code.
	Suspect      []string
	StrictHealth bool
	// Metered: the compared runs ran Redis under callgrind.
	Metered bool
}

// Pair is one group present in both sets.
type Pair struct {
	Key stats.Key
	// Differences are the conditions that differ (compared under Force).
	Differences []string
	Conditions  string
	Rows        []Row
}

// Refusal is a group not compared because its conditions differ.
type Refusal struct {
	// Hard: --force does not override it (different resolutions).
	Hard        bool `json:"hard,omitempty"`
	Key         stats.Key
	Differences []string
}

// Row is one metric of one pair.
type Row struct {
	Metric string     `json:"metric"`
	Unit   string     `json:"unit"`
	Better string     `json:"better"`
	Base   stats.Stat `json:"base"`
	New    stats.Stat `json:"new"`
	// DeltaPct is new median / base median - 1, in percent; DeltaCI its
	// conservative 95% interval from the two medians' intervals.
	DeltaPct Num     `json:"delta_pct"`
	DeltaCI  *[2]Num `json:"delta_ci95_pct,omitempty"`
	P        float64 `json:"p"`
	Alpha    float64 `json:"alpha"`
	Gated    bool    `json:"gated"`
	LimitPct float64 `json:"limit_pct"`
	Verdict  string  `json:"verdict"`
	Note     string  `json:"note,omitempty"`
}

// Compare matches the groups of two result sets by cell, backend and
// client and tests each metric's repeats.
func Compare(base, cand *Set, o CompareOptions) *Comparison {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.NoiseFloor <= 0 {
		o.NoiseFloor = DefaultNoiseFloor
	}
	c := &Comparison{Base: base.Source, New: cand.Source, Alpha: o.Alpha, NoiseFloor: o.NoiseFloor, Forced: o.Force, Loosened: o.Loosened}
	c.checkSets(base, cand)
	matched := c.match(base, cand, o)
	limits := gateLimits(o)
	// Only significance tests share alpha: the gated timing metrics that
	// both sides of a pair measured (a counted metric is decided on its
	// medians, and under callgrind no timing metric gates).
	gates := 0
	for _, runs := range matched {
		c.Metered = c.Metered || runs[1][0].Metered
		if Reference(runs[1][0].Kind) || runs[1][0].Metered {
			continue
		}
		for _, m := range catalog {
			if _, ok := limits[m.Name]; ok && !m.Deterministic() &&
				len(metricValues(m, runs[0])) > 0 && len(metricValues(m, runs[1])) > 0 {
				gates++
			}
		}
	}
	c.GatedTests = gates
	c.PerTestAlpha = o.Alpha
	if c.GatedTests > 0 {
		c.PerTestAlpha = o.Alpha / float64(c.GatedTests)
	}
	for i, runs := range matched {
		c.comparePair(&c.Pairs[i], runs, limits, o)
		for side, name := range []string{"BASE", "NEW"} {
			for _, r := range runs[side] {
				if r.Health.IsSuspect() {
					c.Suspect = append(c.Suspect, name+" "+r.ID+": "+r.Health.Text())
				}
			}
		}
	}
	c.StrictHealth = o.StrictHealth
	return c
}

// match pairs the groups of base and cand by key: a pair for each key both
// hold on one time scale and under one meter (and, without Force, the same
// conditions), the rest refused or only on one side. It returns the runs
// of each pair, in c.Pairs' order.
func (c *Comparison) match(base, cand *Set, o CompareOptions) [][2][]Run {
	bg, ng := groupMap(base), groupMap(cand)
	var matched [][2][]Run
	for _, k := range orderedKeys(base) {
		nr, ok := ng[k]
		if !ok {
			c.OnlyBase = append(c.OnlyBase, k)
			continue
		}
		if b, n := bg[k][0].ResolutionNs, nr[0].ResolutionNs; b != n {
			// Not on one time scale: --force does not override this.
			c.Refused = append(c.Refused, Refusal{Key: k, Hard: true, Differences: []string{fmt.Sprintf(
				"resolution %s in BASE, %s in NEW (simulated time at another speed: latencies not on one scale; --force does not compare them)",
				fmtResolution(b), fmtResolution(n))}})
			continue
		}
		if b, n := bg[k][0].Metered, nr[0].Metered; b != n {
			c.Refused = append(c.Refused, Refusal{Key: k, Hard: true, Differences: []string{fmt.Sprintf(
				"Redis under callgrind in %s only (redis.meter instructions: timings distorted about fifty-fold; --force does not compare them)",
				map[bool]string{true: "BASE", false: "NEW"}[b])}})
			continue
		}
		diffs := conditionDiffs(base, cand, bg[k], nr)
		if len(diffs) > 0 && !o.Force {
			c.Refused = append(c.Refused, Refusal{Key: k, Differences: diffs})
			continue
		}
		c.Pairs = append(c.Pairs, Pair{Key: k, Differences: diffs, Conditions: nr[0].Conditions})
		matched = append(matched, [2][]Run{bg[k], nr})
	}
	for _, k := range orderedKeys(cand) {
		if _, ok := bg[k]; !ok {
			c.OnlyNew = append(c.OnlyNew, k)
		}
	}
	return matched
}

// comparePair compares every catalog metric of one pair and records the
// gated regressions.
func (c *Comparison) comparePair(p *Pair, runs [2][]Run, limits map[string]float64, o CompareOptions) {
	for _, m := range catalog {
		limit, gated := limits[m.Name]
		// Under callgrind only counted work gates: its timings are
		// valgrind's.
		gated = gated && !Reference(runs[1][0].Kind) && (!runs[1][0].Metered || m.Deterministic())
		alpha := o.Alpha
		if gated {
			alpha = c.PerTestAlpha
		} else {
			limit = o.NoiseFloor * 100
		}
		metered := runs[0][0].Metered && runs[1][0].Metered
		if metered && m.Deterministic() && limit == m.Floor*100 {
			// The default gate of a counted metric is its floor, which a
			// metered plan measures lower.
			limit = m.FloorFor(true) * 100
		}
		row, ok := compareMetric(m, runs[0], runs[1], alpha, limit, metered)
		if !ok {
			continue
		}
		if gated && m.Deterministic() && len(metricValues(m, runs[1])) == 0 {
			// A counted gate the base measured and the candidate did not
			// (its path probe failed, or a path vanished) must not pass
			// as "measured on one side only": the gate would not see a
			// candidate that breaks what it counts.
			c.Incomplete = append(c.Incomplete, fmt.Sprintf("%s: %s: the base measured this gated metric and the candidate did not", groupName(p.Key), m.Name))
		}
		row.Gated = gated
		p.Rows = append(p.Rows, row)
		if gated && row.Verdict == Worse {
			reg := regression(p.Key, m, row)
			if d := m.Detail(runs[1][0].Record); d != "" {
				reg.Message += " [" + d + "]"
			}
			c.Regressions = append(c.Regressions, reg)
		}
	}
}

// checkSets notes what makes the sets unfit to compare: either one
// incomplete, a run of NEW that failed its checks, a run of BASE that
// measured nothing.
func (c *Comparison) checkSets(base, cand *Set) {
	for _, s := range []*Set{base, cand} {
		if !s.Complete {
			why := s.Source
			if s.IncompleteWhy != "" {
				why += ": " + s.IncompleteWhy
			}
			c.Incomplete = append(c.Incomplete, why)
		}
	}
	for _, r := range cand.Runs {
		if why := r.Incorrect(); why != "" && !r.Calibration {
			c.Incorrect = append(c.Incorrect, r.ID+": "+why)
		}
	}
	for _, r := range base.Runs {
		if r.Status == StatusFailed && strings.HasPrefix(r.Error, "measured nothing") {
			// A baseline that measured nothing is no baseline.
			c.Incomplete = append(c.Incomplete, base.Source+": run "+r.ID+": "+r.Error)
		}
	}
}

func regression(k stats.Key, m Metric, r Row) Crossing {
	c := Crossing{Threshold: fmt.Sprintf("%s:%s%g%%", m.Name, worseSign(m), math.Round(r.LimitPct*10)/10),
		Group: k, Metric: m.Name, Value: r.DeltaPct, N: r.New.N}
	if r.DeltaCI != nil {
		c.CI = &stats.Interval{Lo: float64(r.DeltaCI[0]), Hi: float64(r.DeltaCI[1]), Confidence: stats.Confidence}
	}
	if m.Deterministic() {
		c.Message = fmt.Sprintf("regression: %s: %s %s -> %s (%s on the medians; counted per job, beyond its noise floor; limit %s)",
			groupName(k), m.Name, m.Format(r.Base.Median), m.Format(r.New.Median), fmtPct(r.DeltaPct), c.Threshold)
		return c
	}
	c.Message = fmt.Sprintf("regression: %s: %s %s -> %s (%s, 95%% CI %s; p=%.4f < %.4g; limit %s)", groupName(k), m.Name,
		m.Format(r.Base.Median), m.Format(r.New.Median), fmtPct(r.DeltaPct), fmtCI(r.DeltaCI), r.P, r.Alpha, c.Threshold)
	return c
}

// compareMetric tests one metric; ok is false when neither side measured it.
func compareMetric(m Metric, base, cand []Run, alpha, limitPct float64, metered bool) (Row, bool) {
	bv, nv := metricValues(m, base), metricValues(m, cand)
	if len(bv) == 0 && len(nv) == 0 {
		return Row{}, false
	}
	row := Row{Metric: m.Name, Unit: m.Unit, Better: m.Better.String(), Alpha: alpha, LimitPct: limitPct, P: 1}
	if len(bv) == 0 || len(nv) == 0 {
		row.Verdict, row.Note = TooNoisy, "measured on one side only"
		return row, true
	}
	row.Base, row.New = Summarize(m, bv), Summarize(m, nv)
	row.DeltaPct = pctChange(row.Base.Median, row.New.Median)
	if bc, nc := row.Base.CI, row.New.CI; bc != nil && nc != nil && bc.Lo > 0 && bc.Hi > 0 {
		row.DeltaCI = &[2]Num{pctChange(bc.Hi, nc.Lo), pctChange(bc.Lo, nc.Hi)}
	}
	if constant(bv, nv) {
		row.Verdict = NoChange
		return row, true
	}
	if m.Deterministic() {
		spread := ownSpread(bv)
		if !m.windowed {
			spread = math.Max(spread, declaredNoise(base))
		}
		return deterministicVerdict(m, row, limitPct, spread, metered), true
	}
	if minP := minUTestP(len(bv), len(nv)); minP > alpha {
		row.Verdict = TooNoisy
		row.Note = fmt.Sprintf("%d+%d repeats cannot reach p < %.3g (need %d per side)", len(bv), len(nv), alpha, repeatsFor(alpha))
		return row, true
	}
	cmp := benchmath.AssumeNothing.Compare(sample(bv, alpha), sample(nv, alpha))
	row.P = cmp.P
	significant := cmp.P < alpha
	beyond := math.Abs(float64(row.DeltaPct)) >= limitPct
	switch {
	case significant && beyond:
		row.Verdict = Better
		if (row.DeltaPct > 0) == (m.Better == LowerIsBetter) {
			row.Verdict = Worse
		}
	case significant:
		row.Verdict, row.Note = NoChange, fmt.Sprintf("significant, but within ±%g%%", limitPct)
	case !beyond:
		row.Verdict = NoChange
	default:
		row.Verdict, row.Note = TooNoisy, fmt.Sprintf("moved %s, not significant (p=%.3f)", fmtPct(row.DeltaPct), cmp.P)
	}
	return row, true
}

// ownSpread is the limit, in percent, that the base's own repeats of a
// counted metric allow (only the base's: a candidate whose repeats spread
// wider must not widen the limit it is judged by): the floors hold for the strategies whose path per
// job timing does not change, but a strategy whose cost does depend on
// timing (stream: how many deleted entries its reads walk past, 2-4% run
// to run) shows it in its repeats, and a change within about two of its
// standard deviations cannot be told from it. The deviation is estimated
// from the widest relative range (range / d2(n), the range's expected
// multiple of the deviation in n samples), so two repeats allow about
// twice their range and ci.yaml's six a little under one range; 0 with one
// repeat a side.
func ownSpread(sides ...[]float64) float64 {
	var widest float64
	for _, v := range sides {
		if len(v) < 2 {
			continue
		}
		lo, hi := slices.Min(v), slices.Max(v)
		if mid := (lo + hi) / 2; mid > 0 {
			widest = math.Max(widest, 100*(hi-lo)/mid/rangeFactor(len(v)))
		}
	}
	return 2.26 * widest
}

// rangeFactor is d2(n): the expected range of n normal samples in standard
// deviations (n >= 2; beyond 10, the value at 10).
func rangeFactor(n int) float64 {
	d2 := []float64{1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078}
	return d2[min(n, 10)-2]
}

// declaredNoise is the spread, in percent, that the base side's backend
// declares in its counted metrics (registry.Backend.CountNoise): the base
// judges, so a candidate cannot declare itself noisier to pass.
func declaredNoise(sides ...[]Run) float64 {
	var n float64
	for _, runs := range sides {
		for _, r := range runs {
			n = math.Max(n, 100*r.CountNoise)
		}
	}
	return n
}

// deterministicVerdict decides a counted metric on its medians: a change
// beyond the limit (at least the metric's floor) is better or worse, with
// no significance test, so one repeat a side decides.
func deterministicVerdict(m Metric, row Row, limitPct, spread float64, metered bool) Row {
	floor := m.FloorFor(metered) * 100
	limit := math.Max(limitPct, floor)
	row.Note = "deterministic (counted per job): decided on the medians"
	if limitPct < floor {
		row.Note += fmt.Sprintf("; the limit asked, %g%%, is below this metric's noise floor, so %g%% applies", limitPct, floor)
	}
	if spread > limit {
		limit = spread
		row.Note += fmt.Sprintf("; limit widened to %.1f%%: the spread its backend declares, or what either side's repeats vary by", spread)
	}
	row.LimitPct = limit
	switch {
	case math.Abs(float64(row.DeltaPct)) < limit:
		row.Verdict = NoChange
	case (row.DeltaPct > 0) == (m.Better == LowerIsBetter):
		row.Verdict = Worse
	default:
		row.Verdict = Better
	}
	return row
}

// worseSign is the sign of a change for the worse.
func worseSign(m Metric) string {
	if m.Better == HigherIsBetter {
		return "-"
	}
	return "+"
}

// constant says every value of both samples is the same (no lost job on
// either side): no change, however few the repeats.
func constant(a, b []float64) bool {
	for _, v := range append(slices.Clone(a), b...) {
		if v != a[0] {
			return false
		}
	}
	return true
}

func metricValues(m Metric, runs []Run) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := r.Values[m.Name]; ok {
			out = append(out, v)
		}
	}
	return out
}

// pctChange is (to/from - 1) in percent; from 0 to a positive is +Inf.
func pctChange(from, to float64) Num {
	switch {
	case from == to:
		return 0
	case from == 0:
		return Num(math.Inf(int(math.Copysign(1, to))))
	}
	return Num((to/from - 1) * 100)
}

// minUTestP is the smallest two-sided p-value a Mann-Whitney U test of
// samples of sizes n1 and n2 can give: 2 / C(n1+n2, n1).
func minUTestP(n1, n2 int) float64 {
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// repeatsFor is the fewest repeats per side for which the test can reach
// alpha.
func repeatsFor(alpha float64) int {
	n := 1
	for minUTestP(n, n) > alpha && n < 100 {
		n++
	}
	return n
}

// groupMap indexes the measured runs of a set by group.
func groupMap(s *Set) map[stats.Key][]Run {
	out := map[stats.Key][]Run{}
	for _, rs := range groups(s) {
		out[rs[0].Key()] = rs
	}
	return out
}

func orderedKeys(s *Set) []stats.Key {
	var out []stats.Key
	for _, rs := range groups(s) {
		out = append(out, rs[0].Key())
	}
	return out
}

// conditionDiffs lists what differs between two groups' conditions: the
// scenario, the machine, and each part of the runs' condition line (load,
// rates, client, Redis version, handler...).
func conditionDiffs(base, cand *Set, br, nr []Run) []string {
	var out []string
	if base.Scenario != cand.Scenario {
		out = append(out, fmt.Sprintf("scenario %q vs %q", base.Scenario, cand.Scenario))
	}
	if bm, nm := base.Env.Machine(), cand.Env.Machine(); bm != nm {
		out = append(out, fmt.Sprintf("machine %s vs %s", bm, nm))
	}
	out = append(out, envDiffs(base.Env, cand.Env)...)
	bp, np := splitConditions(br[0].Conditions), splitConditions(nr[0].Conditions)
	for i := 0; i < max(len(bp), len(np)); i++ {
		b, n := part(bp, i), part(np, i)
		if b != n {
			out = append(out, fmt.Sprintf("%q vs %q", b, n))
		}
	}
	return out
}

// envDiffs lists what differs between two environments beyond the machine
// kind: the CPU model, the kernel, Go and the client libraries' versions,
// each only where both sides recorded it (older files did not). Any of
// them moves the numbers, so compare refuses the pair without --force.
func envDiffs(b, n Env) []string {
	var out []string
	diff := func(what, bv, nv string) {
		if bv != "" && nv != "" && bv != nv {
			out = append(out, fmt.Sprintf("%s %q vs %q", what, bv, nv))
		}
	}
	diff("CPU model", b.CPUModel, n.CPUModel)
	diff("kernel", b.Kernel, n.Kernel)
	diff("Go", b.GoVersion, n.GoVersion)
	mods := make([]string, 0, len(b.Modules))
	for m := range b.Modules {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		diff(m, b.Modules[m], n.Modules[m])
	}
	return out
}

// splitConditions splits a condition line on ", " outside parentheses, so
// "handler uniform(50ms, 500ms)" stays one part.
func splitConditions(line string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 && i+1 < len(line) && line[i+1] == ' ' {
				out = append(out, line[start:i])
				start = i + 2
				i++
			}
		}
	}
	return append(out, line[start:])
}

func part(ps []string, i int) string {
	if i < len(ps) {
		return ps[i]
	}
	return "(none)"
}

func fmtPct(p Num) string {
	switch {
	case math.IsInf(float64(p), 1):
		return "+∞%"
	case math.IsInf(float64(p), -1):
		return "-∞%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

func fmtCI(ci *[2]Num) string {
	if ci == nil {
		return "none"
	}
	return fmtPct(ci[0]) + " to " + fmtPct(ci[1])
}

func fmtResolution(ns int64) string {
	if ns == 0 {
		return "real time"
	}
	return FormatNs(float64(ns)) + " (1 real ms)"
}
