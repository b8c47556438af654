package report

import (
	"math"

	"gonum.org/v1/plot"
)

// Panel is one plot of a StackedTimePlot: its lines against its own y axis.
type Panel struct {
	YLabel string
	Lines  []Line
}

// StackedTimePlot writes <pathNoExt>.png and .svg: panels stacked top to
// bottom on one shared time axis (offered and completed jobs/s over the
// due backlog, say), each with the same bands and markers. The legend is
// the first panel's; a later panel's i-th line takes the colour of the
// first's i-th, so it names one backend's lines in every panel.
func StackedTimePlot(pathNoExt, title, conditions string, panels []Panel, markers []Marker) ([]byte, error) {
	f := &figure{title: title, caption: conditions, legend: newLegend()}
	if len(panels) == 0 {
		return f.write(pathNoExt)
	}
	top, drawn, err := linePlot(f, panels[0].YLabel, panels[0].Lines, markers)
	if err != nil {
		return nil, err
	}
	if drawn == 0 {
		return f.write(pathNoExt)
	}
	xMin, xMax := top.X.Min, top.X.Max
	// The panels below repeat the lines and bands, not their labels.
	unlabelled := make([]Marker, len(markers))
	for i, m := range markers {
		m.Label = ""
		unlabelled[i] = m
	}
	var below []*plot.Plot
	for _, pn := range panels[1:] {
		quiet := &figure{title: title, legend: newLegend()} // its legend is the first panel's
		p, n, err := linePlot(quiet, pn.YLabel, pn.Lines, unlabelled)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			xMin, xMax = math.Min(xMin, p.X.Min), math.Max(xMax, p.X.Max)
			below = append(below, p)
		}
	}
	for _, p := range append([]*plot.Plot{top}, below...) {
		p.X.Min, p.X.Max = xMin, xMax
	}
	for _, p := range below {
		p.X.Label.Text = ""
	}
	if len(below) > 0 {
		top.X.Label.Text = ""
		below[len(below)-1].X.Label.Text = "time (s)"
	}
	f.plot, f.below = top, below
	return f.write(pathNoExt)
}
