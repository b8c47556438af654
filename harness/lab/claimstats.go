package lab

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/aebench/aebench/harness/verdict"
)

// How a claim's verdict is reached: from intervals, never from a point
// ratio alone (except under --quick, which says so).
//
// Each claim scenario runs its backends in interleaved repeats: repeat r of
// every backend and cell runs in one round. A ratio is therefore taken per
// repeat (backend A's repeat r over backend B's repeat r, so slow drift of
// the machine cancels), and the verdict reads the median of those paired
// ratios with its distribution-free interval from order statistics
// (golang.org/x/perf/benchmath AssumeNothing, as benchstat): with n pairs
// the interval [x(k), x(n+1-k)] covers the median with probability
// 1 - 2 P(Binomial(n, 1/2) < k), printed as "coverage". Six pairs give
// [min, max] at 96.9%; fewer cannot reach 95%, and the interval printed is
// then [min, max] with its lower coverage, said beside it.
//
// A rule is a threshold on such an interval. The verdict of one part is
// yes when the whole interval lies on the rule's side, no when it lies on
// the other side, and unknown when it straddles the threshold. A claim's
// parts combine into: holds (all yes), does not hold (all no), holds
// partly (some yes and some no, whatever the unknown parts: it can no
// longer hold, nor fail in full), does not hold in full (some no, none
// yes, some unknown: it cannot hold; partly or not is undecided) or
// inconclusive (otherwise, any unknown).
//
// Too few repeats decide nothing: outside --quick, a part whose interval
// covers the median with less than coverageFloor (one pair: 0), or a rule
// of several intervals whose joint coverage (Bonferroni: 1 minus the sum
// of each interval's miss probability) is below it, is "inconclusive: too
// few repeats", never a verdict read off a single value.

// Verdicts of a claim.
const (
	verdictHolds        = "holds"
	verdictNotHold      = "does not hold"
	verdictPartly       = "holds partly"
	verdictInconclusive = "inconclusive"
	verdictTooFew       = "inconclusive: too few repeats"
	verdictSuspect      = "inconclusive: suspect runs"
	verdictNotInFull    = "does not hold in full"
	verdictNotMeasured  = "not measured"
	// pointMark follows every verdict of a --quick run.
	pointMark = " (point estimate)"
)

// interval is the median of a paired statistic over the repeats and its
// order-statistics interval.
type interval struct {
	Name     string  `json:"name"`
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	// Coverage is the probability that [Lo, Hi] holds the true median.
	Coverage float64 `json:"coverage"`
	Repeats  int     `json:"repeats"`
	// Values are the paired values, in repeat order.
	Values []float64 `json:"values"`
}

// medianInterval is the median of xs with its 95% interval.
func medianInterval(name string, xs []float64) interval {
	return medianIntervalAt(name, xs, 0.95)
}

// jointIntervals recomputes a rule's intervals each at 1 - (1 -
// coverageFloor)/k, so that their joint coverage (Bonferroni) meets the
// floor whenever the repeats allow it. At 95% each, three intervals of
// twelve repeats took a 96.1% order-statistics interval each and their
// joint coverage, 88%, fell under the floor however many repeats ran.
func jointIntervals(ivs []interval) []interval {
	if len(ivs) < 2 {
		return ivs
	}
	conf := 1 - (1-coverageFloor)/float64(len(ivs))
	out := make([]interval, len(ivs))
	for i, iv := range ivs {
		out[i] = medianIntervalAt(iv.Name, iv.Values, max(conf, 0.95))
	}
	return out
}

// medianIntervalAt is the median of xs with its interval at confidence
// conf (the narrowest order-statistics interval that reaches it, or the
// widest there is).
func medianIntervalAt(name string, xs []float64, conf float64) interval {
	iv := interval{Name: name, Repeats: len(xs), Values: slices.Clone(xs)}
	if len(xs) == 0 {
		return iv
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &benchmath.Thresholds{CompareAlpha: 0.05}), conf)
	iv.Estimate, iv.Lo, iv.Hi, iv.Coverage = s.Center, s.Lo, s.Hi, s.Confidence
	if math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || math.IsNaN(s.Lo) || math.IsNaN(s.Hi) {
		sorted := slices.Sorted(slices.Values(xs))
		iv.Lo, iv.Hi = sorted[0], sorted[len(sorted)-1]
		iv.Coverage = 1 - 2*math.Pow(0.5, float64(len(xs)))
		if len(xs) == 1 {
			iv.Coverage = 0
		}
	}
	return iv
}

func (iv interval) String() string {
	if iv.Repeats == 0 {
		return iv.Name + ": not measured"
	}
	if iv.Repeats == 1 {
		return fmt.Sprintf("%s %s (1 repeat: no interval)", iv.Name, fmtX(iv.Estimate))
	}
	note := ""
	if iv.Coverage < 0.95 {
		note = ", below 95%: too few repeats"
	}
	return fmt.Sprintf("%s %s (interval %s-%s, coverage %.1f%%%s; %d paired repeats)", iv.Name, fmtX(iv.Estimate),
		fmtN(iv.Lo), fmtN(iv.Hi), 100*iv.Coverage, note, iv.Repeats)
}

func fmtX(r float64) string { return fmtN(r) + "x" }

func fmtN(r float64) string {
	if math.Abs(r) >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// coverageFloor is the least coverage, of one interval or jointly of a
// rule's intervals, that decides a part outside --quick.
const coverageFloor = 0.90

// tri is one part of a rule: yes, no or unknown (the interval straddles
// the threshold).
type tri int

const (
	unknown tri = iota
	yes
	no
)

// judge decides one part: point true reads the estimate alone (--quick).
type judge struct{ point bool }

// atLeast: yes when the interval lies at or above th.
func (j judge) atLeast(iv interval, th float64) tri {
	return j.side(iv, func(x float64) bool { return x >= th })
}

// atMost: yes when the interval lies at or below th.
func (j judge) atMost(iv interval, th float64) tri {
	return j.side(iv, func(x float64) bool { return x <= th })
}

// below: yes when the interval lies below th.
func (j judge) below(iv interval, th float64) tri {
	return j.side(iv, func(x float64) bool { return x < th })
}

// within: yes when the interval lies inside [lo, hi], no when it lies
// wholly outside it.
func (j judge) within(iv interval, lo, hi float64) tri {
	if iv.Repeats == 0 {
		return unknown
	}
	in := func(x float64) bool { return x >= lo && x <= hi }
	if j.point {
		return of(in(iv.Estimate))
	}
	switch {
	case in(iv.Lo) && in(iv.Hi):
		return yes
	case iv.Hi < lo || iv.Lo > hi:
		return no
	}
	return unknown
}

func (j judge) side(iv interval, ok func(float64) bool) tri {
	if iv.Repeats == 0 {
		return unknown
	}
	if j.point {
		return of(ok(iv.Estimate))
	}
	switch {
	case ok(iv.Lo) && ok(iv.Hi):
		return yes
	case !ok(iv.Lo) && !ok(iv.Hi):
		return no
	}
	return unknown
}

func of(b bool) tri {
	if b {
		return yes
	}
	return no
}

// verdict is the rule's verdict over its intervals ivs, each decided into
// parts: "inconclusive: too few repeats" when their joint coverage (one
// interval's own) is under coverageFloor (outside --quick; one pair's is
// 0), else combine's.
func (j judge) verdict(ivs []interval, parts ...tri) string {
	if !j.point && len(ivs) > 0 && jointCoverage(ivs) < coverageFloor {
		return verdictTooFew
	}
	return combine(parts...)
}

// jointCoverage is the probability that every interval of ivs holds its
// median, at least (Bonferroni): 1 minus the sum of their misses.
func jointCoverage(ivs []interval) float64 {
	miss := 0.0
	for _, iv := range ivs {
		miss += 1 - iv.Coverage
	}
	return 1 - miss
}

// combine turns the parts of a rule into a verdict.
func combine(parts ...tri) string {
	var y, n, u int
	for _, p := range parts {
		switch p {
		case yes:
			y++
		case no:
			n++
		default:
			u++
		}
	}
	switch {
	case len(parts) == 0:
		return verdictNotMeasured
	case y > 0 && n > 0:
		return verdictPartly
	case n > 0 && u > 0:
		return verdictNotInFull
	case u > 0:
		return verdictInconclusive
	case n == 0:
		return verdictHolds
	}
	return verdictNotHold
}

// side names one group of runs: a backend label in the cells whose varied
// fields include every part of Vary (none: any cell).
type side struct {
	Label  string
	Metric string
	Vary   []string
}

// byRepeat is a side's metric value per repeat (the first measured,
// non-calibration run of the repeat in a matching cell).
func byRepeat(s *verdict.Set, sd side) map[int]float64 {
	vary := map[int][]string{}
	for _, c := range s.Cells {
		vary[c.Index] = c.Vary
	}
	out := map[int]float64{}
	for _, r := range s.Runs {
		if r.Calibration || !r.Measured() || r.Label != sd.Label || !hasAll(vary[r.Cell], sd.Vary) {
			continue
		}
		if v, ok := r.Values[sd.Metric]; ok {
			if _, seen := out[r.Repeat]; !seen {
				out[r.Repeat] = v
			}
		}
	}
	return out
}

// paired applies f to the sides' values repeat by repeat (repeats every
// side measured, f's ok true) and returns the median interval of the
// results.
func paired(s *verdict.Set, name string, f func(v []float64) (float64, bool), sides ...side) interval {
	per := make([]map[int]float64, len(sides))
	for i, sd := range sides {
		per[i] = byRepeat(s, sd)
	}
	var reps []int
	for r := range per[0] {
		reps = append(reps, r)
	}
	sort.Ints(reps)
	var xs []float64
	for _, r := range reps {
		v := make([]float64, len(sides))
		ok := true
		for i := range sides {
			v[i], ok = per[i][r]
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		if x, ok := f(v); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
	}
	return medianInterval(name, xs)
}

// ratio is num/den per repeat.
func ratio(s *verdict.Set, name string, num, den side) interval {
	return paired(s, name, func(v []float64) (float64, bool) { return v[0] / v[1], v[1] > 0 }, num, den)
}

// change is the differential of a change: (a's value at to over a's at
// from) over (b's at to over b's at from), per repeat: how much more a
// moved than b between the two cells.
func change(s *verdict.Set, name, metric, a, b, from, to string) interval {
	return paired(s, name, func(v []float64) (float64, bool) {
		if v[0] <= 0 || v[2] <= 0 || v[3] <= 0 {
			return 0, false
		}
		return (v[1] / v[0]) / (v[3] / v[2]), true
	}, side{a, metric, []string{from}}, side{a, metric, []string{to}}, side{b, metric, []string{from}}, side{b, metric, []string{to}})
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// describe joins intervals for the measured column.
func describe(ivs ...interval) string {
	parts := make([]string, len(ivs))
	for i, iv := range ivs {
		parts[i] = iv.String()
	}
	return strings.Join(parts, "; ")
}
