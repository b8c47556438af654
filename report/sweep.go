package report

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepSeries is one backend's metric against a swept parameter: at each X
// the median over the repeats (Y) and its 95% confidence interval (Lo, Hi;
// equal to Y where there is no interval).
type SweepSeries struct {
	Label  string
	X, Y   []float64
	Lo, Hi []float64
}

// SweepPlot writes <pathNoExt>.png and .svg: a metric (yLabel) against the
// swept parameter (xLabel), a line per series with confidence bars. The x
// axis is logarithmic when the positive X values span two decades or more;
// the y axis starts at 0 unless a value is negative.
func SweepPlot(pathNoExt, title, conditions, xLabel, yLabel string, series []SweepSeries) ([]byte, error) {
	for _, s := range series {
		if len(s.X) != len(s.Y) || len(s.Lo) != len(s.Y) || len(s.Hi) != len(s.Y) {
			return nil, fmt.Errorf("report: sweep plot %q: series %q has %d x, %d y, %d lo, %d hi values",
				title, s.Label, len(s.X), len(s.Y), len(s.Lo), len(s.Hi))
		}
	}
	logX := spansDecades(series)
	p := newPlot(xLabel, yLabel)
	p.Add(newGrid())
	f := &figure{title: title, caption: conditions, legend: newLegend()}
	drawn := 0
	yMin, yMax := 0.0, math.Inf(-1)
	for i, s := range series {
		label := s.Label
		if label == "" {
			label = "series " + strconv.Itoa(i+1)
		}
		var pts plotter.XYs
		var errs plotter.YErrors
		for j := range s.X {
			if !finite(s.X[j]) || !finite(s.Y[j]) || logX && s.X[j] <= 0 {
				continue
			}
			lo, hi := s.Lo[j], s.Hi[j]
			if !finite(lo) || !finite(hi) {
				lo, hi = s.Y[j], s.Y[j]
			}
			pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			errs = append(errs, struct{ Low, High float64 }{s.Y[j] - lo, hi - s.Y[j]})
			yMin, yMax = math.Min(yMin, lo), math.Max(yMax, hi)
		}
		if len(pts) == 0 {
			f.addLegend(label + "  (no data)")
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("report: sweep %q: %w", label, err)
		}
		line.LineStyle = seriesLineStyle(i)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("report: sweep %q: %w", label, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3), Shape: seriesGlyph(i)}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return nil, fmt.Errorf("report: sweep %q: %w", label, err)
		}
		bars.LineStyle.Color = seriesColor(i)
		p.Add(line, sc, bars)
		f.addLegend(label, line, sc)
		drawn++
	}
	if drawn == 0 {
		return f.write(pathNoExt)
	}
	if yMax <= yMin {
		yMax = yMin + 1
	}
	p.Y.Min, p.Y.Max = yMin, yMax*1.05
	p.Y.Tick.Marker = plainTicks{}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.X.Tick.Marker = plainTicks{}
	}
	f.plot = p
	return f.write(pathNoExt)
}

// spansDecades: the positive X values of every series span a factor of 100
// or more, so a linear axis would crowd the small ones into a corner.
func spansDecades(series []SweepSeries) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, x := range s.X {
			if finite(x) && x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	return hi >= 100*lo
}
