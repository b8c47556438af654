// Package report turns benchmark results into what a person reads: latency
// percentile plots on the 1/(1-p) axis, time-series plots with fault markers,
// plain-text tables, and the HdrHistogram percentile-distribution (.hgrm)
// text that other HdrHistogram tools read.
//
// Every plot is written twice, as <path>.png (to look at) and <path>.svg
// (portable, with its fonts embedded so it renders the same anywhere). The
// plotting library panics on some inputs (a log axis with a value <= 0, for
// one); this package clamps such values before plotting and turns any panic
// that still escapes into an error, so a bad series never takes the harness
// down with it.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure geometry. 10 x 6.25 in at 144 dpi gives a 1440 x 900 PNG: large
// enough to read tick labels on a laptop screen without zooming.
const (
	figWidth  = 10 * vg.Inch
	figHeight = 6.25 * vg.Inch
	pngDPI    = 144
	margin    = 0.18 * vg.Inch

	// maxLegendRunes cuts legend lines that would not fit even in small
	// type; a label that long belongs in a table, not a legend.
	maxLegendRunes = 48

	// maxLegendFrac bounds the legend strip so long labels cannot squeeze
	// the plot itself into a sliver.
	maxLegendFrac = 0.36
)

// textStyle uses a sans face everywhere: the library default is a serif
// face, which reads worse at tick-label sizes.
func textStyle(size vg.Length, clr color.Color) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size),
		Handler: plot.DefaultTextHandler,
	}
}

// Greys for text and grid; values, not package variables, so nothing here
// is shared mutable state.
const (
	inkGrey     = 0x20
	captionGrey = 0x55
	gridGrey    = 0xDD
)

func grey(y uint8) color.Color { return color.Gray{Y: y} }

// seriesColor is the Okabe-Ito palette (distinguishable with the common
// colour-vision deficiencies), without its yellow, which vanishes on white.
func seriesColor(i int) color.Color {
	pal := []color.RGBA{
		{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
		{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
		{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
		{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
		{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
		{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
		{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	}
	return pal[i%len(pal)]
}

// seriesDashes cycles at a different period from the colours, so even the
// 8th series (colour repeats) differs from the 1st by its dash pattern, and
// lines stay distinguishable in a greyscale print.
func seriesDashes(i int) []vg.Length {
	pats := [][]vg.Length{
		nil,
		{vg.Points(7), vg.Points(3)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(9), vg.Points(3), vg.Points(2), vg.Points(3)},
		{vg.Points(4), vg.Points(4)},
	}
	return pats[i%len(pats)]
}

func seriesGlyph(i int) draw.GlyphDrawer {
	shapes := []draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
		draw.RingGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{},
	}
	return shapes[i%len(shapes)]
}

func seriesLineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.8), Dashes: seriesDashes(i)}
}

// newPlot returns a plot styled for this package: sans fonts, light grid
// drawn by the caller, no title (the figure draws title and caption itself
// so the caption can sit under the title in a smaller face).
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = color.White
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		// Only font and colour change: the library's alignments and
		// rotation for each axis are what place the labels correctly.
		ax.Label.TextStyle.Font = textStyle(12, nil).Font
		ax.Label.TextStyle.Color = grey(inkGrey)
		ax.Tick.Label.Font = textStyle(10, nil).Font
		ax.Tick.Label.Color = grey(inkGrey)
		ax.Label.Padding = vg.Points(2)
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	return p
}

func newGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical = draw.LineStyle{Color: grey(gridGrey), Width: vg.Points(0.6)}
	g.Horizontal = draw.LineStyle{Color: grey(gridGrey), Width: vg.Points(0.6)}
	return g
}

// figure is a titled plot with a caption line and a legend in its own strip
// to the right, outside the data area, so no line is ever hidden under it.
type figure struct {
	title, caption string
	plot           *plot.Plot // nil: draw a "no data" figure
	// below: plots stacked under plot, sharing its x axis (StackedTimePlot).
	below        []*plot.Plot
	legend       plot.Legend
	legendLabels []string // the legend's entry texts, for measuring
	hasLegend    bool
	emptyNote    string // shown in place of the plot when plot is nil
}

// addLegend adds an entry to the figure's legend.
func (f *figure) addLegend(label string, thumbs ...plot.Thumbnailer) {
	label = truncateLines(label, maxLegendRunes)
	f.legend.Add(label, thumbs...)
	f.legendLabels = append(f.legendLabels, label)
	f.hasLegend = true
}

// truncateLines cuts each line of s to n runes, marking the cut with "…".
func truncateLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if r := []rune(l); len(r) > n {
			lines[i] = string(r[:n-1]) + "…"
		}
	}
	return strings.Join(lines, "\n")
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle = textStyle(10.5, grey(inkGrey))
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(30)
	l.Padding = vg.Points(7)
	return l
}

// fitText shrinks sty until txt fits in width, down to a legible minimum;
// a caption that is still too long is cut with an ellipsis.
func fitText(sty text.Style, txt string, width vg.Length) (text.Style, string) {
	for sty.Width(txt) > width && sty.Font.Size > 8 {
		sty.Font.Size -= 0.5
	}
	if sty.Width(txt) <= width {
		return sty, txt
	}
	r := []rune(txt)
	for len(r) > 1 && sty.Width(string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return sty, string(r) + "…"
}

func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin*0.6, -margin*0.6)
	width := c.Max.X - c.Min.X

	top := c.Max.Y
	if f.title != "" {
		// Regular weight, not bold: every face used is embedded in the SVG
		// (about 0.5 MB each), so one face keeps each SVG near half a megabyte.
		sty, t := fitText(textStyle(17, grey(0x00)), f.title, width)
		sty.XAlign = draw.XCenter
		sty.YAlign = draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, t)
		top -= sty.Height(t) + vg.Points(3)
	}
	if f.caption != "" {
		sty, t := fitText(textStyle(11, grey(captionGrey)), f.caption, width)
		sty.XAlign = draw.XCenter
		sty.YAlign = draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, t)
		top -= sty.Height(t) + vg.Points(6)
	}
	body := c
	body.Max.Y = top

	if f.plot == nil {
		sty := textStyle(20, grey(captionGrey))
		sty.XAlign = draw.XCenter
		sty.YAlign = draw.YCenter
		note := f.emptyNote
		if note == "" {
			note = "no data"
		}
		body.FillText(sty, body.Center(), note)
		return
	}

	plotArea := body
	if f.hasLegend {
		// Shrink the legend's text rather than clip it when labels are
		// long; below 8 pt it would no longer be legible, so clip then.
		maxW := width * maxLegendFrac
		for f.legendWidth()+vg.Points(12) > maxW && f.legend.TextStyle.Font.Size > 8 {
			f.legend.TextStyle.Font.Size -= 0.5
		}
		lw := min(f.legendWidth()+vg.Points(12), maxW)
		plotArea.Max.X -= lw
		legArea := body
		legArea.Min.X = plotArea.Max.X + vg.Points(12)
		// Start the legend a little below the caption, level with the top
		// of the data area, so it reads as belonging to the plot.
		legArea.Max.Y -= vg.Points(4)
		f.legend.Draw(legArea)
	}
	if len(f.below) == 0 {
		f.plot.Draw(plotArea)
		return
	}
	col := [][]*plot.Plot{{f.plot}}
	for _, b := range f.below {
		col = append(col, []*plot.Plot{b})
	}
	cells := plot.Align(col, draw.Tiles{Rows: len(col), Cols: 1, PadY: vg.Points(10)}, plotArea)
	for i := range col {
		col[i][0].Draw(cells[i][0])
	}
}

// legendWidth is the width the legend draws at: thumbnail, a space, and the
// widest line of any entry (plot.Legend.Rectangle measures a multi-line
// entry by its first line only).
func (f *figure) legendWidth() vg.Length {
	sty := f.legend.TextStyle
	var w vg.Length
	for _, e := range f.legendLabels {
		for line := range strings.Lines(e) {
			w = max(w, sty.Width(strings.TrimRight(line, "\n")))
		}
	}
	return f.legend.ThumbnailWidth + sty.Width(" ") + w
}

// write renders the figure to <pathNoExt>.png and <pathNoExt>.svg and
// returns the SVG, so that a page can embed the plot without reading the
// file back.
func (f *figure) write(pathNoExt string) ([]byte, error) {
	if pathNoExt == "" {
		return nil, errors.New("report: empty output path")
	}
	if dir := filepath.Dir(pathNoExt); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("report: create output directory: %w", err)
		}
	}

	// A stacked figure grows by half a figure per panel below the first.
	height := figHeight * vg.Length(1+0.5*float64(len(f.below)))
	img := vgimg.NewWith(vgimg.UseWH(figWidth, height), vgimg.UseDPI(pngDPI))
	if err := safeDraw(f, draw.New(img)); err != nil {
		return nil, err
	}
	if err := writeFile(pathNoExt+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return nil, err
	}

	// Embedded fonts: without them the SVG names "Liberation Sans" and a
	// viewer lacking it substitutes a face with other metrics, so labels
	// overrun the layout computed here.
	svg := vgsvg.NewWith(vgsvg.UseWH(figWidth, height), vgsvg.EmbedFonts(true))
	if err := safeDraw(f, draw.New(svg)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: %s.svg: %w", pathNoExt, err)
	}
	if err := writeFile(pathNoExt+".svg", bytes.NewReader(buf.Bytes())); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// safeDraw converts a panic inside the plotting library into an error: the
// library panics rather than returning errors on degenerate input.
func safeDraw(f *figure, c draw.Canvas) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: plotting %q failed: %v", f.title, r)
		}
	}()
	f.draw(c)
	return nil
}

func writeFile(path string, src io.WriterTo) (err error) {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if cerr := fh.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("report: close %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path) // do not leave a truncated image behind
		}
	}()
	if _, err := src.WriteTo(fh); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	return nil
}

// finite reports whether v can be placed on a plot at all.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// formatTick prints an axis value without exponent notation in the range a
// benchmark produces (1µs to hours in ms), trimming trailing zeros.
func formatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	av := math.Abs(v)
	var s string
	switch {
	case av >= 1e7 || av < 1e-4:
		s = fmt.Sprintf("%.3g", v)
	case av >= 1:
		s = fmt.Sprintf("%.2f", v)
	default:
		s = fmt.Sprintf("%.6f", v)
	}
	if strings.Contains(s, ".") && !strings.ContainsAny(s, "eE") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
