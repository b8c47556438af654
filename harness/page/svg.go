package page

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/stats"
)

// fontFaces collects the @font-face rules of every inlined SVG once: each
// SVG gonum writes embeds its fonts (about 550 KB each), and inline SVGs
// share the page's style sheet, so the page declares each font once.
type fontFaces struct {
	rules []string
	seen  map[string]bool
}

var (
	fontFaceRE = regexp.MustCompile(`@font-face\s*\{[^}]*\}`)
	preambleRE = regexp.MustCompile(`(?s)^.*?<svg([\s>])`)
)

// inline turns an SVG document into markup for an HTML page: no XML
// declaration or comments before <svg>, its fonts moved to the page, and a
// width that follows the page.
func (ff *fontFaces) inline(svg []byte) (template.HTML, error) {
	s := string(svg)
	if !strings.Contains(s, "<svg") {
		return "", fmt.Errorf("not an SVG document")
	}
	if strings.Contains(strings.ToLower(s), "<script") {
		return "", fmt.Errorf("SVG with a script is not inlined")
	}
	s = preambleRE.ReplaceAllString(s, `<svg class="plot"$1`)
	s = fontFaceRE.ReplaceAllStringFunc(s, func(rule string) string {
		if ff.seen == nil {
			ff.seen = map[string]bool{}
		}
		if !ff.seen[rule] {
			ff.seen[rule] = true
			ff.rules = append(ff.rules, rule)
		}
		return ""
	})
	return template.HTML(s), nil // #nosec: our own plots, scripts refused above
}

// css is the page-level style with the collected fonts.
func (ff *fontFaces) css() template.CSS {
	return template.CSS(strings.Join(ff.rules, "\n")) // #nosec: rules taken from our own plots
}

// plotFile is an SVG plot the run wrote.
type plotFile struct {
	Name string
	SVG  template.HTML
	Err  string
}

// plotSet is a run's plots: the main ones in order of importance, the
// rest folded away.
type plotSet struct{ Main, More []plotFile }

// plotOrder is the order of importance of the run's plots: end-to-end
// latency first, its p99 over time, then throughput (with the faults and
// starved seconds marked), the machine's health, recovery and backlog; the
// others follow, folded.
var plotOrder = []string{"e2e", "e2e_over_time", "throughput", "queue_wait_over_time", "health", "cpu", "recovery", "backlog"}

// runPlots inlines the run's plots: those of plotOrder first, in its
// order, then the rest in name order.
func runPlots(plots []Plot, ff *fontFaces) plotSet {
	plots = slices.Clone(plots)
	rank := func(p Plot) int {
		name := strings.TrimSuffix(p.Name, ".svg")
		for i, n := range plotOrder {
			if name == n {
				return i
			}
		}
		return len(plotOrder)
	}
	slices.SortStableFunc(plots, func(a, b Plot) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out plotSet
	for _, pl := range plots {
		p := plotFile{Name: pl.Name}
		var err error
		if p.SVG, err = ff.inline(pl.SVG); err != nil {
			p.Err = err.Error()
		}
		if rank(pl) < len(plotOrder) {
			out.Main = append(out.Main, p)
		} else {
			out.More = append(out.More, p)
		}
	}
	return out
}

// ciChart draws one metric's median and 95% CI per backend of a cell: a
// point per backend and, when the repeats allow a CI, its bar.
func ciChart(m verdict.Metric, groups []stats.Group, ff *fontFaces) (template.HTML, error) {
	p := plot.New()
	p.Title.Text = m.Name + " (median, 95% CI)"
	p.Y.Label.Text = m.Unit
	p.Y.Min = 0
	// Latencies in ms, on a log axis when they span a decade or more:
	// backends apart by 1000x (a pure stream with delayed jobs) otherwise
	// sit on 0 beside the slowest.
	scale, logY := 1.0, m.Unit == "ns"
	if logY {
		scale, p.Y.Label.Text = 1e6, "ms (log scale)"
	}
	var names []string
	var pts plotter.XYs
	var bars plotter.XYs
	var errs plotter.YErrors
	for _, g := range groups {
		st, ok := g.Metric(m.Name)
		if !ok {
			continue
		}
		if logY && st.Median <= 0 {
			continue // no place on a log axis
		}
		names = append(names, g.Backend)
		x := float64(len(names) - 1)
		med := st.Median / scale
		pts = append(pts, plotter.XY{X: x, Y: med})
		if st.CI != nil && (!logY || st.CI.Lo > 0) {
			bars = append(bars, plotter.XY{X: x, Y: med})
			errs = append(errs, struct{ Low, High float64 }{med - st.CI.Lo/scale, st.CI.Hi/scale - med})
		}
	}
	if len(pts) == 0 {
		return "", nil
	}
	if len(bars) == 0 {
		p.Title.Text = m.Name + " (median; no interval, see above)"
	}
	if logY {
		lo, hi := pts[0].Y, pts[0].Y
		for _, pt := range pts {
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
		}
		for i := range bars {
			lo, hi = min(lo, bars[i].Y-errs[i].Low), max(hi, bars[i].Y+errs[i].High)
		}
		if hi/lo >= 10 {
			// Log only where the values span a decade or more: within one,
			// a log axis has no labelled tick to read.
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
			p.Y.Min, p.Y.Max = lo/2, hi*2
		} else {
			p.Y.Label.Text = "ms"
		}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return "", err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(4)
	sc.GlyphStyle.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	p.Add(sc, plotter.NewGrid())
	if len(bars) > 0 {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{bars, errs})
		if err != nil {
			return "", err
		}
		p.Add(eb)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	sans(p)
	return renderSVG(p, ff)
}

// sans sets the face package report's plots use, so the page embeds one
// font: the library's default is a serif face.
func sans(p *plot.Plot) {
	face := font.Font{Typeface: "Liberation", Variant: "Sans"}
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label} {
		st.Font = font.From(face, st.Font.Size)
	}
}

// renderSVG draws a plot as SVG with its fonts embedded (then moved to the
// page), turning a panic of the plotting library into an error.
func renderSVG(p *plot.Plot, ff *fontFaces) (h template.HTML, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: %v", r)
		}
	}()
	c := vgsvg.NewWith(vgsvg.UseWH(4.5*vg.Inch, 3*vg.Inch), vgsvg.EmbedFonts(true))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	return ff.inline(buf.Bytes())
}
