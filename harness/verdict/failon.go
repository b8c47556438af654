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
