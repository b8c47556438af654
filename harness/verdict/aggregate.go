package verdict

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/aebench/aebench/stats"
)

const aggregateMethod = "per (cell, backend label, client), over the repeats that measured a full window " +
	"(status ok or failed; calibration runs excluded): the median and its distribution-free 95% confidence " +
	"interval from order statistics (golang.org/x/perf/benchmath AssumeNothing, as benchstat); " +
	"a CI needs at least 6 repeats"

// Aggregate computes the statistics block of a result set: for each
// (cell, backend, client) group and each catalog metric the runs measured,
// the median over the repeats and its 95% confidence interval.
func Aggregate(s *Set) *stats.Block {
	b := &stats.Block{Method: aggregateMethod, Confidence: stats.Confidence, Groups: []stats.Group{}}
	vary := map[int][]string{}
	for _, c := range s.Cells {
		vary[c.Index] = c.Vary
	}
	for _, runs := range groups(s) {
		r0 := runs[0]
		g := stats.Group{Cell: r0.Cell, Vary: vary[r0.Cell], Backend: r0.Label, BackendName: r0.Backend, Kind: r0.Kind, Client: r0.Client}
		for _, r := range runs {
			g.Runs = append(g.Runs, r.ID)
		}
		for _, m := range catalog {
			var vs []float64
			for _, r := range runs {
				if v, ok := r.Values[m.Name]; ok {
					vs = append(vs, v)
				}
			}
			if len(vs) > 0 {
				g.Metrics = append(g.Metrics, Summarize(m, vs))
			}
		}
		b.Groups = append(b.Groups, g)
	}
	return b
}

// groups splits the measured, non-calibration runs by group, in the order
// groups first appear.
func groups(s *Set) [][]Run {
	var out [][]Run
	idx := map[stats.Key]int{}
	for _, r := range s.Runs {
		if r.Calibration || !r.Measured() {
			continue
		}
		i, ok := idx[r.Key()]
		if !ok {
			i = len(out)
			idx[r.Key()] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// Summarize is one metric's median and 95% CI over values (in run order).
func Summarize(m Metric, values []float64) stats.Stat {
	st := stats.Stat{Metric: m.Name, Unit: m.Unit, Better: m.Better.String(), N: len(values),
		Values: slices.Clone(values)}
	sum := benchmath.AssumeNothing.Summary(sample(values, 0.05), stats.Confidence)
	st.Median = sum.Center
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) || math.IsNaN(sum.Lo) || math.IsNaN(sum.Hi) {
		st.Note = fmt.Sprintf("no 95%% CI from %d repeats (it takes at least %d)", len(values), minRepeatsCI)
	} else {
		st.CI = &stats.Interval{Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence}
	}
	return st
}

// minRepeatsCI is the fewest repeats whose order statistics give a 95%
// interval of the median: 2 x 0.5^n < 0.05 first holds at n = 6.
const minRepeatsCI = 6

// sample builds a benchmath sample; NewSample sorts, so it gets a copy.
func sample(values []float64, alpha float64) *benchmath.Sample {
	return benchmath.NewSample(slices.Clone(values), &benchmath.Thresholds{CompareAlpha: alpha})
}
