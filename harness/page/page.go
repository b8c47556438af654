// Package page writes report.html, the one page a person opens after a
// run: the conditions, the statistics over repeats per backend (median and
// 95% CI, as tables and as plots), the ledger, the faults, the run's plots,
// and, given a baseline, the comparison with its verdicts. The page is
// self-contained: its plots are inline SVG whose fonts are declared once
// in the page, and it makes no request of any kind, so it can be attached
// to a CI run or mailed.
package page

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/stats"
)

// FileName is the page's name in a results directory.
const FileName = "report.html"

//go:embed page.html.tmpl
var pageTemplate string

// chartMetrics are the metrics drawn per cell.
var chartMetrics = []string{"throughput", "e2e.p50", "e2e.p99", "redis_cpu_us_per_job"}

// Plot is one of a run's plots as the plots output drew it: the SVG file's
// name and its bytes, handed over in memory.
type Plot struct {
	Name string
	SVG  []byte
}

// WriteFile writes the page for s (and its comparison with base, if not
// nil) with plots to path, replacing it atomically: the one file it
// touches.
func WriteFile(path string, s, base *verdict.Set, plots []Plot) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = Write(bw, s, base, plots)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// Write writes the page of s (compared with base, if not nil) with the
// run's plots, all from memory.
func Write(w io.Writer, s, base *verdict.Set, plots []Plot) error {
	t, err := template.New("page").Funcs(template.FuncMap{"join": strings.Join, "ns": verdict.FormatNs}).Parse(pageTemplate)
	if err != nil {
		return err
	}
	d := build(s, base, plots)
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// data is what the template shows.
type data struct {
	Set       *verdict.Set
	Title     string
	Generated string
	Status    string
	Verdict   verdictView
	Cells     []cellView
	Runs      []runView
	Faults    []runView
	Plots     plotSet
	NoPlots   string // why there are none
	Compare   *compareView
	Fonts     template.CSS
	Problems  []string
	Phases    *phasesView
	Census    *phasesView
	// CensusNote explains the census table.
	CensusNote string
	Drift      *phasesView
	DriftNote  string
	// Mix: the job mix's tables (kinds, tenants, storm), MixNote above them.
	Mix     []*phasesView
	MixNote string
}

// phasesView is the per-phase table of runs with a load profile.
type phasesView struct {
	Header []string
	Rows   [][]string
	Notes  []string
}

type cellView struct {
	Index      int
	Vary       string
	Conditions string
	Headline   []headlineRow
	Cols       headlineCols
	Peers      []string // the cell's peers, the heads of headlineRow.XPeers
	Header     []string
	Rows       [][]string
	Charts     []template.HTML
	ChartErrs  []string
	// NoInterval says why the statistics have no interval ("": they do).
	NoInterval string
	// Served names the cell's backends that ran served (jobstore.Serving).
	Served string
}

type runView struct {
	verdict.Run
	Bad string
}

type compareView struct {
	Headline, Gate, Base string
	Pairs                []pairView
	Regressions          []string
	// Overlay are the headline metrics of both sets, side by side.
	Overlay []template.HTML
}

type pairView struct {
	Title, Conditions string
	Header            []string
	Rows              []rowView
}

type rowView struct {
	Cells []string
	Class string
}

func build(s *verdict.Set, base *verdict.Set, plots []Plot) data {
	ff := &fontFaces{}
	d := data{Set: s, Title: "aebench " + s.Scenario, Generated: time.Now().UTC().Format(time.RFC3339)}
	d.Status = "complete"
	switch {
	case s.Error != "" && s.Complete:
		d.Status = "complete, FAILED: " + s.Error
	case s.Error != "":
		d.Status = "error: " + s.Error
	case s.Interrupted:
		d.Status = "interrupted"
	case !s.Complete:
		d.Status = "incomplete"
		if s.IncompleteWhy != "" {
			d.Status += " (" + s.IncompleteWhy + ")"
		}
	}
	block := s.Stats
	if block == nil {
		block = verdict.Aggregate(s)
	}
	d.Cells = cells(s, block, ff)
	for _, r := range s.Runs {
		rv := runView{Run: r, Bad: r.Incorrect()}
		d.Runs = append(d.Runs, rv)
		if r.Faults != nil {
			d.Faults = append(d.Faults, rv)
		}
		for _, p := range r.Problems {
			d.Problems = append(d.Problems, r.ID+": "+p)
		}
	}
	d.Phases = phasesOf(s)
	d.Census, d.CensusNote = censusOf(s), analysis.CensusNote
	d.Drift, d.DriftNote = driftOf(s), analysis.DriftNote
	d.Mix, d.MixNote = mixOf(s), analysis.MixNote
	if base != nil {
		d.Compare = compareSection(base, s)
		d.Compare.Overlay = overlayCharts(base, s, ff)
	}
	d.Verdict = verdictOf(s, d.Status, d.Compare)
	d.Plots = runPlots(plots, ff)
	if len(plots) == 0 {
		d.NoPlots = noPlotsWhy(s)
	}
	d.Fonts = ff.css()
	return d
}

func cells(s *verdict.Set, b *stats.Block, ff *fontFaces) []cellView {
	var out []cellView
	byCell := map[int][]stats.Group{}
	var order []int
	for _, g := range b.Groups {
		if _, ok := byCell[g.Cell]; !ok {
			order = append(order, g.Cell)
		}
		byCell[g.Cell] = append(byCell[g.Cell], g)
	}
	for _, ci := range order {
		gs := byCell[ci]
		cv := cellView{Index: ci, Vary: strings.Join(gs[0].Vary, ", "), Header: []string{"backend", "client", "runs"}}
		for _, r := range s.Runs {
			if r.Cell == ci && !r.Calibration {
				cv.Conditions = r.Conditions
				break
			}
		}
		cv.Headline = headline(s, ci, gs)
		cv.Cols = colsOf(cv.Headline)
		for _, p := range peersOf(gs) {
			cv.Peers = append(cv.Peers, p.Backend)
		}
		cv.NoInterval = noInterval(gs)
		cv.Served = servedIn(s, ci)
		metrics := presentMetrics(gs)
		for _, m := range metrics {
			cv.Header = append(cv.Header, m.Name+" ("+m.Better.String()+" is better)")
		}
		for _, g := range gs {
			row := []string{g.Backend, g.Client, fmt.Sprint(len(g.Runs))}
			for _, m := range metrics {
				row = append(row, statText(m, g))
			}
			cv.Rows = append(cv.Rows, row)
		}
		for _, name := range chartMetrics {
			m, _ := verdict.Lookup(name)
			svg, err := ciChart(m, gs, ff)
			if err != nil {
				cv.ChartErrs = append(cv.ChartErrs, name+": "+err.Error())
			} else if svg != "" {
				cv.Charts = append(cv.Charts, svg)
			}
		}
		out = append(out, cv)
	}
	return out
}

// presentMetrics are the catalog metrics some group of the cell measured.
func presentMetrics(gs []stats.Group) []verdict.Metric {
	var out []verdict.Metric
	for _, m := range verdict.Catalog() {
		for _, g := range gs {
			if _, ok := g.Metric(m.Name); ok {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

func statText(m verdict.Metric, g stats.Group) string {
	st, ok := g.Metric(m.Name)
	if !ok {
		return "-"
	}
	if st.CI == nil {
		return m.Format(st.Median)
	}
	return fmt.Sprintf("%s [%s, %s]", m.Format(st.Median), m.Format(st.CI.Lo), m.Format(st.CI.Hi))
}

// overlayCharts draws each headline metric of both sets side by side per
// cell: every backend's median and interval in BASE and in NEW.
func overlayCharts(base, s *verdict.Set, ff *fontFaces) []template.HTML {
	bb, nb := base.Stats, s.Stats
	if bb == nil {
		bb = verdict.Aggregate(base)
	}
	if nb == nil {
		nb = verdict.Aggregate(s)
	}
	var out []template.HTML
	for _, name := range chartMetrics {
		m, err := verdict.Lookup(name)
		if err != nil {
			continue
		}
		var gs []stats.Group
		for _, side := range []struct {
			tag string
			blk *stats.Block
		}{{"base", bb}, {"new", nb}} {
			for _, g := range side.blk.Groups {
				if _, ok := g.Metric(name); ok {
					g.Backend = fmt.Sprintf("%s %s c%d", g.Backend, side.tag, g.Cell)
					gs = append(gs, g)
				}
			}
		}
		sort.SliceStable(gs, func(i, j int) bool { return gs[i].Backend < gs[j].Backend })
		if h, err := ciChart(m, gs, ff); err == nil && len(gs) > 0 {
			out = append(out, h)
		}
	}
	return out
}

func compareSection(base, s *verdict.Set) *compareView {
	c := verdict.Compare(base, s, verdict.CompareOptions{})
	cv := &compareView{Headline: c.Headline(), Gate: c.GateText(), Base: base.Source}
	for _, r := range c.Regressions {
		cv.Regressions = append(cv.Regressions, r.Message)
	}
	for _, p := range c.Pairs {
		pv := pairView{Title: fmt.Sprintf("cell %d %s (%s)", p.Key.Cell, p.Key.Backend, p.Key.Client),
			Conditions: p.Conditions, Header: verdict.RowHeader()}
		for _, r := range p.Rows {
			pv.Rows = append(pv.Rows, rowView{Cells: verdict.RowCells(r), Class: strings.ReplaceAll(r.Verdict, " ", "-")})
		}
		cv.Pairs = append(cv.Pairs, pv)
	}
	return cv
}

// servedIn lists the backends of cell ci whose own worker loop ran
// aebench's handler, so that the cell's conditions line is not read as
// theirs: "" when none did.
func servedIn(s *verdict.Set, ci int) string {
	var names []string
	for _, r := range s.Runs {
		if r.Cell == ci && r.Served && !slices.Contains(names, r.Label) {
			names = append(names, r.Label)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, ", ") + ": served: " + summary.ServedNote + "."
}

// noPlotsWhy says why a page has no plots of the run.
func noPlotsWhy(s *verdict.Set) string {
	measured := false
	for _, r := range s.Runs {
		measured = measured || r.Measured()
	}
	switch {
	case !measured:
		return "Nothing was measured, so nothing was drawn."
	case s.PlotError != "":
		return "The plots failed: " + s.PlotError
	}
	return "No plots were drawn: the run was made with --no-plots, or its directory holds no *.svg."
}

// driftOf is the drift windows' table of s's runs, with the verdicts as
// notes (nil: no drift run).
func driftOf(s *verdict.Set) *phasesView {
	pv := &phasesView{Header: analysis.DriftHeader()}
	for _, r := range s.Runs {
		if r.Record == nil || r.Record.Drift == nil {
			continue
		}
		pv.Rows = append(pv.Rows, analysis.DriftRows(r.ID, r.Record.Drift)...)
		pv.Notes = append(pv.Notes, analysis.DriftLines(r.ID, r.Record.Drift)...)
	}
	if len(pv.Rows) == 0 {
		return nil
	}
	return pv
}

// censusOf is the key census table of s's runs (nil: none took one).
func censusOf(s *verdict.Set) *phasesView {
	pv := &phasesView{Header: analysis.CensusHeader()}
	for _, r := range s.Runs {
		if r.Record == nil {
			continue
		}
		if row, ok := analysis.CensusRow(r.ID, *r.Record); ok {
			pv.Rows = append(pv.Rows, row)
		}
		if e := r.Record.CensusError; e != "" {
			pv.Notes = append(pv.Notes, r.ID+": the key census failed: "+e)
		}
	}
	if len(pv.Rows) == 0 && len(pv.Notes) == 0 {
		return nil
	}
	return pv
}

// phasesOf is the per-phase table of s's runs with phases (nil: none).
func phasesOf(s *verdict.Set) *phasesView {
	pv := &phasesView{Header: analysis.PhaseHeader()}
	for _, r := range s.Runs {
		if r.Record == nil || len(r.Record.Phases) == 0 {
			continue
		}
		name := r.ID
		for _, p := range r.Record.Phases {
			pv.Rows = append(pv.Rows, analysis.PhaseRow(name, p))
		}
		pv.Notes = append(pv.Notes, analysis.PhaseNotes(name, *r.Record)...)
	}
	if len(pv.Rows) == 0 {
		return nil
	}
	return pv
}

// mixOf is the job mix's tables of s's runs: kinds, queues, tenants, storm, each
// left out when no run has it (nil: no run has a mix).
func mixOf(s *verdict.Set) []*phasesView {
	kinds := &phasesView{Header: analysis.KindHeader()}
	queues := &phasesView{Header: analysis.QueueHeader()}
	tenants := &phasesView{Header: analysis.TenantHeader()}
	storm := &phasesView{Header: analysis.StormHeader()}
	for _, r := range s.Runs {
		if r.Record == nil || r.Record.Mix == nil {
			continue
		}
		m := r.Record.Mix
		kinds.Rows = append(kinds.Rows, analysis.KindRows(r.ID, m)...)
		queues.Rows = append(queues.Rows, analysis.QueueRows(r.ID, m)...)
		if row, ok := analysis.TenantRow(r.ID, m); ok {
			tenants.Rows = append(tenants.Rows, row)
		}
		rows, line := analysis.StormRows(r.ID, m)
		storm.Rows = append(storm.Rows, rows...)
		if line != "" {
			storm.Notes = append(storm.Notes, line)
		}
	}
	var out []*phasesView
	for _, v := range []*phasesView{kinds, queues, tenants, storm} {
		if len(v.Rows) > 0 {
			out = append(out, v)
		}
	}
	return out
}
