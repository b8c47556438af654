package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LatencySeries is one line on a latency percentile plot. PercentilePlot
// only reads Hist, but a Histogram is not safe for concurrent use: nothing
// may record into it while the plot is drawn (merge the per-goroutine
// histograms first).
type LatencySeries struct {
	Label string
	Hist  *hdrhistogram.Histogram // values recorded in nanoseconds
}

// LatencyFloorMs is the smallest latency a percentile plot draws, in ms
// (1 µs). The y axis is logarithmic and cannot show 0, and a latency below a
// microsecond is a recording artefact in a Redis round-trip benchmark, so
// smaller values (including 0) are drawn at the floor.
const LatencyFloorMs = 0.001

// ticksPerHalfDistance is how densely the percentile curve is sampled: 5
// points per halving of the remaining tail, as HdrHistogram's Java
// outputPercentileDistribution does by default. Enough for a smooth line,
// few enough (about 200 points for a million values) to keep files small.
const ticksPerHalfDistance = 5

// minPercentileDecades keeps the x axis at least 0%..99% wide, so a run with
// few samples still reads as a percentile plot rather than two dots.
const minPercentileDecades = 2

// PercentilePlot writes <pathNoExt>.png and <pathNoExt>.svg: latency in ms on
// a log y axis against percentile on the 1/(1-p) axis (ticks 0%, 90%, 99%,
// 99.9%, ...: each decade is ten times rarer), one line per series, with a
// legend giving each series' p50/p99/max and count, a title, and the
// conditions line under it.
//
// The x axis runs a little past the largest sample count of any series (the
// tail of a 10 000-sample run ends at 99.99%), and at least to 99%. Each series' maximum is
// drawn at 1/(1-p) = its sample count ("one in N"), since 100% has no place
// on this axis. Series whose histogram is nil or empty are listed in the
// legend as "(no data)" and not drawn; if no series has data the figure says
// "no data". Latencies below LatencyFloorMs are drawn at the floor.
func PercentilePlot(pathNoExt, title, conditions string, series []LatencySeries) ([]byte, error) {
	p := newPlot("percentile", "latency (ms)")
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Add(newGrid())

	f := &figure{title: title, caption: conditions, legend: newLegend()}
	var (
		drawn      int
		xMax       = 1.0
		yMin, yMax = math.Inf(1), math.Inf(-1)
	)
	for i, s := range series {
		label := s.Label
		if label == "" {
			label = "series " + strconv.Itoa(i+1)
		}
		pts := percentileCurve(s.Hist)
		if len(pts) == 0 {
			f.addLegend(label + "  (no data)")
			continue
		}
		for _, pt := range pts {
			xMax = math.Max(xMax, pt.X)
			yMin = math.Min(yMin, pt.Y)
			yMax = math.Max(yMax, pt.Y)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("report: series %q: %w", label, err)
		}
		line.LineStyle = seriesLineStyle(i)
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		// A curve that is a single point (one sample, or all samples in one
		// bucket at 0%) has no length to stroke: mark it so it is visible.
		if len(pts) == 1 || pts[0].X == pts[len(pts)-1].X {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("report: series %q: %w", label, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3.5), Shape: seriesGlyph(i)}
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		f.addLegend(label+"\n"+summaryLine(s.Hist), thumbs...)
		drawn++
	}

	if drawn == 0 {
		return f.write(pathNoExt)
	}

	// End the axis just past the last point rather than at the next
	// decade: a 120k-sample run would otherwise waste a sixth of the width
	// on an empty 99.999%..99.9999% decade.
	p.X.Min, p.X.Max = 1, math.Max(xMax*1.2, math.Pow10(minPercentileDecades))
	p.X.Tick.Marker = percentileTicks{}
	p.Y.Min, p.Y.Max = logRange(yMin, yMax)
	p.Y.Tick.Marker = logTicks{}
	f.plot = p
	return f.write(pathNoExt)
}

// percentileCurve turns a histogram into points (1/(1-p), latency ms). It
// returns nil for a nil or empty histogram.
func percentileCurve(h *hdrhistogram.Histogram) plotter.XYs {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	n := float64(h.TotalCount())
	var pts plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(ticksPerHalfDistance) {
		q := b.Quantile / 100
		var x float64
		if q >= 1 {
			// 1/(1-1) is infinite: put the maximum where a 1-in-N event
			// sits, never left of the last finite point.
			x = n
			if len(pts) > 0 {
				x = math.Max(x, pts[len(pts)-1].X)
			}
		} else {
			x = 1 / (1 - q)
		}
		y := math.Max(float64(b.ValueAt)/1e6, LatencyFloorMs)
		if !finite(x) || !finite(y) {
			continue
		}
		if k := len(pts); k > 0 && pts[k-1].X == x && pts[k-1].Y == y {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
	}
	return pts
}

// summaryLine is the legend's second line: the numbers a reader looks for
// first, so they need not be read off the curve.
func summaryLine(h *hdrhistogram.Histogram) string {
	pc := Percentiles(h)
	ms := func(ns float64) string { return formatMs(ns / 1e6) }
	return fmt.Sprintf("p50 %s · p99 %s · max %s ms · n=%s",
		ms(pc["p50"]), ms(pc["p99"]), ms(pc["max"]), formatCount(int64(pc["count"])))
}

// formatMs prints a latency in ms with three significant digits.
func formatMs(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func formatCount(n int64) string {
	switch {
	case n >= 10_000_000:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n >= 10_000:
		return strconv.FormatInt(n/1_000, 10) + "k"
	default:
		return strconv.FormatInt(n, 10)
	}
}

// logRange pads [lo, hi] on a log scale so lines do not sit on the frame,
// and widens a narrow range to at least a factor of 4 so there are labelled
// ticks to read values against.
func logRange(lo, hi float64) (float64, float64) {
	if !(lo > 0) || !finite(lo) {
		lo = LatencyFloorMs
	}
	if !(hi >= lo) || !finite(hi) {
		hi = lo
	}
	const minRatio = 4
	if hi/lo < minRatio {
		mid := math.Sqrt(lo * hi)
		lo, hi = mid/math.Sqrt(minRatio), mid*math.Sqrt(minRatio)
	}
	return lo / 1.2, hi * 1.2
}

// percentileTicks labels the 1/(1-p) axis in percentiles: 1 -> 0%, 10 ->
// 90%, 100 -> 99%, ... with the median marked too and unlabelled minor ticks
// between decades.
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(hi) {
		return nil
	}
	var ticks []plot.Tick
	for d := 0; math.Pow10(d) <= hi*(1+1e-9); d++ {
		base := math.Pow10(d)
		ticks = append(ticks, plot.Tick{Value: base, Label: percentLabel(d)})
		for m := 2.0; m <= 9 && base*m <= hi; m++ {
			t := plot.Tick{Value: base * m}
			if d == 0 && m == 2 {
				t.Label = "50%"
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// percentLabel is the percentile at 1/(1-p) = 10^d: 0%, 90%, 99%, 99.9%...
func percentLabel(d int) string {
	if d == 0 {
		return "0%"
	}
	p := 100 * (1 - math.Pow10(-d))
	return strconv.FormatFloat(p, 'f', max(d-2, 0), 64) + "%"
}

// logTicks labels a log axis with 1-2-5 steps when the range is narrow
// enough for them to fit, otherwise decades, with minor ticks at every
// integer multiple. Unlike plot.LogTicks it never prints exponents and does
// not panic on a non-positive range.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	decades := math.Log10(hi / lo)
	var labelled map[float64]bool
	switch {
	case decades <= 1.2:
		labelled = map[float64]bool{1: true, 2: true, 3: true, 5: true, 7: true}
	case decades <= 3.5:
		labelled = map[float64]bool{1: true, 2: true, 5: true}
	default:
		labelled = map[float64]bool{1: true}
	}
	var ticks []plot.Tick
	for d := int(math.Floor(math.Log10(lo))); math.Pow10(d) <= hi; d++ {
		base := math.Pow10(d)
		for m := 1.0; m <= 9; m++ {
			v := base * m
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = formatTick(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// Percentiles returns p50, p90, p99, p99.9, p99.99 and max in the
// histogram's unit, with keys "p50", "p90", "p99", "p99.9", "p99.99", "max",
// plus "count" (values recorded) and "mean". A nil or empty histogram gives
// all zeros, so callers can print the map without checking.
func Percentiles(h *hdrhistogram.Histogram) map[string]float64 {
	out := map[string]float64{
		"p50": 0, "p90": 0, "p99": 0, "p99.9": 0, "p99.99": 0, "max": 0, "count": 0, "mean": 0,
	}
	if h == nil || h.TotalCount() == 0 {
		return out
	}
	for key, q := range map[string]float64{"p50": 50, "p90": 90, "p99": 99, "p99.9": 99.9, "p99.99": 99.99} {
		out[key] = float64(h.ValueAtQuantile(q))
	}
	out["max"] = float64(h.Max())
	out["count"] = float64(h.TotalCount())
	out["mean"] = h.Mean()
	return out
}
