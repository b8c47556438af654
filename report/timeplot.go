package report

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Line is one series on a time plot.
type Line struct {
	Label string
	X, Y  []float64 // X in seconds since measurement start
}

// Marker is an event on a time plot, e.g. a fault injected at X seconds,
// drawn as a vertical line with its label; with To after X it is a band
// instead (a load profile's phase), shaded from X to To under the lines
// and labelled at its foot.
type Marker struct {
	X, To float64
	Label string
}

// Band says m is a band rather than a line.
func (m Marker) Band() bool { return m.To > m.X }

// TimePlot writes <pathNoExt>.png and <pathNoExt>.svg: lines over time
// (throughput jobs/s, backlog, ...) against seconds since measurement start,
// the y axis labelled yLabel, and a vertical line per marker.
//
// Points whose X or Y is NaN or infinite are dropped. The y axis starts at 0
// unless a value is negative, so heights compare by eye. Lines with no
// points are listed in the legend as "(no data)"; with no points at all the
// figure says "no data". X and Y of one line must have the same length.
func TimePlot(pathNoExt, title, conditions, yLabel string, lines []Line, markers []Marker) ([]byte, error) {
	f := &figure{title: title, caption: conditions, legend: newLegend()}
	p, drawn, err := linePlot(f, yLabel, lines, markers)
	if err != nil || drawn == 0 {
		if err != nil {
			return nil, err
		}
		return f.write(pathNoExt)
	}
	f.plot = p
	return f.write(pathNoExt)
}

// linePlot is a time plot's data area: its lines (their legend entries go
// to f), bands under them and marker lines over them; drawn counts the
// lines with a point.
func linePlot(f *figure, yLabel string, lines []Line, markers []Marker) (*plot.Plot, int, error) {
	for _, l := range lines {
		if len(l.X) != len(l.Y) {
			return nil, 0, fmt.Errorf("report: time plot %q: line %q has %d x values and %d y values", f.title, l.Label, len(l.X), len(l.Y))
		}
	}
	p := newPlot("time (s)", yLabel)
	p.Add(newGrid())
	var bands, ms []Marker
	for _, m := range markers {
		switch {
		case finite(m.X) && finite(m.To) && m.Band():
			bands = append(bands, m)
		case finite(m.X):
			ms = append(ms, m)
		}
	}
	if len(bands) > 0 {
		p.Add(&bandPlotter{bands: bands})
	}
	b := bounds{xMin: math.Inf(1), xMax: math.Inf(-1), yMin: math.Inf(1), yMax: math.Inf(-1)}
	drawn := 0
	for i, l := range lines {
		ok, err := addTimeLine(p, f, i, l, &b)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			drawn++
		}
	}
	if drawn == 0 {
		return p, 0, nil
	}
	for _, m := range append(ms, bands...) {
		b.xMin, b.xMax = math.Min(b.xMin, m.X), math.Max(b.xMax, max(m.X, m.To))
	}
	xMin, xMax, yMin, yMax := b.xMin, b.xMax, b.yMin, b.yMax
	if xMax == xMin {
		xMin, xMax = xMin-0.5, xMax+0.5
	}
	if yMin > 0 {
		yMin = 0
	}
	if yMax == yMin {
		yMax = yMin + 1
	}
	p.X.Min, p.X.Max = xMin, xMax
	// Headroom above the highest line for the marker labels.
	p.Y.Min, p.Y.Max = yMin, yMax+(yMax-yMin)*0.12
	p.Y.Tick.Marker = plainTicks{}
	p.X.Tick.Marker = plainTicks{}
	if len(ms) > 0 {
		p.Add(&markerPlotter{markers: ms})
	}
	return p, drawn, nil
}

// bounds are the data's extent on both axes.
type bounds struct{ xMin, xMax, yMin, yMax float64 }

// addTimeLine adds line i to p (a scatter too when it has 3 points or
// fewer) and its legend entry to f, widening b; false: the line had no
// finite point and is listed as "(no data)".
func addTimeLine(p *plot.Plot, f *figure, i int, l Line, b *bounds) (bool, error) {
	label := l.Label
	if label == "" {
		label = "line " + strconv.Itoa(i+1)
	}
	var pts plotter.XYs
	for j := range l.X {
		if finite(l.X[j]) && finite(l.Y[j]) {
			pts = append(pts, plotter.XY{X: l.X[j], Y: l.Y[j]})
		}
	}
	if len(pts) == 0 {
		f.addLegend(label + "  (no data)")
		return false, nil
	}
	for _, pt := range pts {
		b.xMin, b.xMax = math.Min(b.xMin, pt.X), math.Max(b.xMax, pt.X)
		b.yMin, b.yMax = math.Min(b.yMin, pt.Y), math.Max(b.yMax, pt.Y)
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return false, fmt.Errorf("report: line %q: %w", label, err)
	}
	line.LineStyle = seriesLineStyle(i)
	p.Add(line)
	thumbs := []plot.Thumbnailer{line}
	// Few points: mark them, a 2-point line hides that it is 2 points and a
	// 1-point line is invisible.
	if len(pts) <= 3 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return false, fmt.Errorf("report: line %q: %w", label, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3.5), Shape: seriesGlyph(i)}
		p.Add(sc)
		thumbs = append(thumbs, sc)
	}
	f.addLegend(label, thumbs...)
	return true, nil
}

// plainTicks labels a linear axis at 1-2-2.5-5 steps, aiming at about
// seven labels (the library's default gives three, too few to read values
// off), with four or five minor ticks between labels. Labels never use
// exponent notation; values from 10 000 up are written with a k or M suffix
// ("40k jobs/s" reads faster than "40000").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	const target = 7
	raw := (hi - lo) / target
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step, minors := 10*mag, 5
	for _, c := range []struct {
		m      float64
		minors int
	}{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}} {
		if c.m*mag >= raw {
			step, minors = c.m*mag, c.minors
			break
		}
	}
	minor := step / float64(minors)
	var ticks []plot.Tick
	first := math.Ceil(lo/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-9 || i > 10*target*minors {
			break
		}
		t := plot.Tick{Value: v}
		if k := v / step; math.Abs(k-math.Round(k)) < 1e-6 {
			t.Value = math.Round(k) * step // no 0.30000000000000004
			t.Label = formatQuantity(t.Value)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// formatQuantity writes an axis value with a k or M suffix from 10 000 up.
func formatQuantity(v float64) string {
	switch av := math.Abs(v); {
	case av >= 1e7:
		return formatTick(v/1e6) + "M"
	case av >= 1e4:
		return formatTick(v/1e3) + "k"
	default:
		return formatTick(v)
	}
}

// markerPlotter draws each marker as a dashed vertical line across the data
// area with its label at the top, stepping labels down when markers are too
// close for their labels to sit side by side.
type markerPlotter struct{ markers []Marker }

func (m *markerPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	ls := draw.LineStyle{Color: grey(0x44), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	sty := textStyle(9.5, grey(0x22))
	sty.XAlign = draw.XLeft
	sty.YAlign = draw.YTop
	lineH := sty.Height("M") + vg.Points(2)

	inside := func(x vg.Length) bool { return x >= c.Min.X-1 && x <= c.Max.X+1 }
	// All lines first, then all labels, so no line crosses a label.
	for _, mk := range m.markers {
		if x := trX(mk.X); inside(x) {
			c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
		}
	}
	var rowEnds []vg.Length // right edge of the last label in each row
	for _, mk := range m.markers {
		x := trX(mk.X)
		if !inside(x) || mk.Label == "" {
			continue
		}
		w := sty.Width(mk.Label)
		crosses := func(l, r vg.Length) bool {
			for _, o := range m.markers {
				if ox := trX(o.X); ox > l && ox < r && o != mk {
					return true
				}
			}
			return false
		}
		// Right of the line, unless that runs off the plot or across
		// another marker's line while the left side is clear.
		s := sty
		tx, left, right := x+vg.Points(3), x+vg.Points(3), x+vg.Points(3)+w
		lfits := x-vg.Points(3)-w >= c.Min.X
		if right > c.Max.X || (crosses(left, right) && lfits && !crosses(x-vg.Points(3)-w, x)) {
			s.XAlign = draw.XRight
			tx, left, right = x-vg.Points(3), x-vg.Points(3)-w, x-vg.Points(3)
		}
		row := 0
		for row < len(rowEnds) && rowEnds[row] > left-vg.Points(4) {
			row++
		}
		if row == len(rowEnds) {
			rowEnds = append(rowEnds, right)
		} else {
			rowEnds[row] = right
		}
		ty := c.Max.Y - vg.Points(2) - vg.Length(row)*lineH
		// A white box behind the label keeps data and other markers'
		// lines from running through its letters.
		box := vg.Rectangle{
			Min: vg.Point{X: left - vg.Points(1.5), Y: ty - sty.Height(mk.Label)},
			Max: vg.Point{X: right + vg.Points(1.5), Y: ty},
		}
		c.SetColor(color.White)
		c.Fill(box.Path())
		c.FillText(s, vg.Point{X: tx, Y: ty}, mk.Label)
	}
}

// DataRange makes the x axis include every marker; markers do not constrain y.
func (m *markerPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, mk := range m.markers {
		xmin, xmax = math.Min(xmin, mk.X), math.Max(xmax, mk.X)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}

// bandPlotter shades each band from its X to its To in alternating light
// tints, under the data, with its label at the foot of the band.
type bandPlotter struct{ bands []Marker }

func (bp *bandPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	tints := []color.Color{color.RGBA{R: 0xE8, G: 0xF0, B: 0xFA, A: 0xFF}, color.RGBA{R: 0xFA, G: 0xEE, B: 0xE4, A: 0xFF}}
	sty := textStyle(9.5, grey(0x44))
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	for i, b := range bp.bands {
		x0, x1 := max(trX(b.X), c.Min.X), min(trX(b.To), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.SetColor(tints[i%len(tints)])
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x1, Y: c.Max.Y}}.Path())
		if b.Label != "" && sty.Width(b.Label) < x1-x0-vg.Points(4) {
			c.FillText(sty, vg.Point{X: x0 + vg.Points(3), Y: c.Min.Y + vg.Points(3)}, b.Label)
		}
	}
}

// DataRange: bands widen the x axis to their ends, not y.
func (bp *bandPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, b := range bp.bands {
		xmin, xmax = math.Min(xmin, b.X), math.Max(xmax, b.To)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}
