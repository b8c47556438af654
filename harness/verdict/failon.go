package verdict

import (
	"fmt"
	"strings"
)

// DefaultLimit is the limit, in percent, a metric is gated at without a
// --fail-on, and whether it is gated at all: a counted metric at its
// floor, a timed one at the noise floor (a fraction).
func DefaultLimit(m Metric, noiseFloor float64) (float64, bool) {
	switch {
	case m.Gate && m.Deterministic():
		return m.Floor * 100, true
	case m.Gate:
		return noiseFloor * 100, true
	}
	return 0, false
}

// CheckFailOn holds --fail-on thresholds to tightening: one that would set
// a gated metric's limit above its default is refused, naming the metric
// and its limit, unless loosen (the --loosen flag), and then listed in
// loosened, which the verdict prints. A --fail-on on an ungated metric adds
// a gate.
func CheckFailOn(ts []Threshold, noiseFloor float64, loosen bool) (loosened []string, err error) {
	var refused []string
	for _, t := range ts {
		if !t.Relative {
			continue
		}
		limit, gated := DefaultLimit(t.Metric, noiseFloor)
		if !gated || t.Pct <= limit {
			continue
		}
		what := fmt.Sprintf("%s: limit %g%% -> %g%%", t.Metric.Name, limit, t.Pct)
		if loosen {
			loosened = append(loosened, what)
		} else {
			refused = append(refused, fmt.Sprintf("--fail-on %s would loosen %s's gate (its limit is %g%%)", t.Expr, t.Metric.Name, limit))
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%s: a --fail-on only tightens a gate; pass --loosen to loosen it (the verdict then says so)", strings.Join(refused, "; "))
	}
	return loosened, nil
}

// TightenOnly keeps the relative thresholds that tighten a gated metric's
// limit or gate an ungated one, and names the others in dropped: a
// scenario's thresholds block (either side's) may add or tighten a gate,
// never loosen one, since a candidate could otherwise loosen the gate it is
// judged by in its own scenario file. Loosening takes --fail-on with
// --loosen.
func TightenOnly(ts []Threshold, noiseFloor float64) (kept []Threshold, dropped []string) {
	for _, t := range ts {
		limit, gated := DefaultLimit(t.Metric, noiseFloor)
		if t.Relative && gated && t.Pct > limit {
			dropped = append(dropped, fmt.Sprintf("%s (would loosen %s's limit of %g%%)", t.Expr, t.Metric.Name, limit))
			continue
		}
		kept = append(kept, t)
	}
	return kept, dropped
}

// gateLimits maps each gated metric to its limit in percent.
func gateLimits(o CompareOptions) map[string]float64 {
	out := map[string]float64{}
	for _, m := range catalog {
		if limit, gated := DefaultLimit(m, o.NoiseFloor); gated {
			out[m.Name] = limit
		}
	}
	// Several thresholds on one metric (a --fail-on and a scenario's):
	// the tightest holds. A looser one got here only through --loosen.
	set := map[string]bool{}
	for _, t := range o.FailOn {
		if !t.Relative {
			continue
		}
		if l, ok := out[t.Metric.Name]; !set[t.Metric.Name] || !ok || t.Pct < l {
			out[t.Metric.Name] = t.Pct
		}
		set[t.Metric.Name] = true
	}
	return out
}
