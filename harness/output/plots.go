package output

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/page"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
	"github.com/aebench/aebench/stats"
)

// plots draws, at the plan's end, per cell one percentile plot per latency
// (repeats merged), throughput and backlog over time, and for a sweep one
// plot per metric against the swept field. It keeps each run's histograms
// and time series as the runs end. A plot that fails is noted in the
// summary (PlotError) and the plan goes on: plots are a view of numbers
// summary.json and the .hgrm files already hold.
type plots struct {
	base
	planView
	hists       map[string]*hist.Set
	seriesByRun map[string][]engine.SeriesPoint
	// mixByRun: each run's job split (mixplots.go).
	mixByRun map[string][]ledger.Group
	// drawn are the SVGs drawn, handed to the page in memory.
	drawn []page.Plot
}

// keep notes the plot a drawing at pathNoExt returns, for the page.
func (pl *plots) keep(pathNoExt string) func(svg []byte, err error) error {
	return func(svg []byte, err error) error {
		if err == nil {
			pl.drawn = append(pl.drawn, page.Plot{Name: filepath.Base(pathNoExt) + ".svg", SVG: svg})
		}
		return err
	}
}

// Drawn is every plot drawn by PlanDone, for the page.
func (pl *plots) Drawn() []page.Plot { return pl.drawn }

func newPlots(string) (Output, error) {
	return &plots{hists: map[string]*hist.Set{}, seriesByRun: map[string][]engine.SeriesPoint{}, mixByRun: map[string][]ledger.Group{}}, nil
}

func (pl *plots) Start(p Plan) error {
	pl.s = p.Scenario
	return pl.base.Start(p)
}

func (pl *plots) RunDone(rs *summary.RunSummary, res *engine.Result) error {
	pl.hists[rs.ID] = &res.Hists
	pl.seriesByRun[rs.ID] = res.Series
	pl.mixByRun[rs.ID] = res.Mix
	return nil
}

func (pl *plots) PlanDone(sum *summary.Summary) error {
	pl.sum = sum
	for _, d := range []struct {
		what string
		draw func() error
	}{{"plots", pl.plots}, {"sweep plots", pl.sweepPlots}} {
		if err := d.draw(); err != nil {
			if sum.PlotError != "" {
				sum.PlotError += "; "
			}
			sum.PlotError += d.what + ": " + err.Error()
		}
	}
	return nil
}

// plotTags are the histograms drawn as percentile plots, with their titles.
var plotTags = []struct {
	tag   hist.Tag
	title string
}{
	{hist.TagE2E, "End-to-end latency (intended enqueue -> completed)"},
	{hist.TagQueueWait, "Queue wait (due -> handler start)"},
	{hist.TagLateness, "Lateness of delayed jobs and retries (start - RunAt)"},
	{hist.TagEnqueue, "Enqueue call"},
	{hist.TagClaim, "Claim call (calls that returned jobs)"},
	{hist.TagComplete, "Complete call"},
	{hist.TagAckWait, "Ack wait (handler end -> Complete acknowledged)"},
	{hist.TagRecovery, "Recovery (fault -> next handler start of each job in flight at it)"},
}

// plots writes, per cell, one percentile plot per latency with a line per
// backend (repeats merged), and the time plots (timePlots). The null
// calibration run is left out: it is not a job store.
func (pl *plots) plots() error {
	var errs []error
	for _, c := range pl.s.Cells {
		runs := pl.cellRuns(c.Index)
		if len(runs) == 0 {
			continue
		}
		cond := cellShortConditions(runs)
		prefix := pl.cellPrefix(c)
		for _, pt := range plotTags {
			var series []report.LatencySeries
			any := false
			for _, label := range labelsOf(runs) {
				merged, n := pl.mergedHist(runs, label, pt.tag)
				name := label
				if n > 1 {
					name = fmt.Sprintf("%s (%d runs)", label, n)
				}
				series = append(series, report.LatencySeries{Label: name, Hist: merged})
				any = any || merged != nil && merged.TotalCount() > 0
			}
			if !any {
				continue
			}
			path := filepath.Join(pl.dir, prefix+pt.tag.String())
			if err := pl.keep(path)(report.PercentilePlot(path, pl.title(pt.title), cond, series)); err != nil {
				errs = append(errs, err)
			}
		}
		errs = append(errs, pl.timePlots(runs, prefix, cond), pl.mixPlots(runs, prefix, cond))
	}
	return errors.Join(errs...)
}

func (pl *plots) title(s string) string { return s + " - " + pl.s.Name }

// timeLines are a cell's per-second series, a line per run.
type timeLines struct {
	thr, backlog, delayed, cpuWait, e2e []report.Line
	e2e50                               []report.Line
	queueWait, harnessCPU, redisCPU     []report.Line
	starved                             []report.Marker
}

// linesOf gathers the per-second series of a cell's runs.
func (pl *plots) linesOf(runs []summary.RunSummary) timeLines {
	var tl timeLines
	for _, r := range runs {
		name := r.Label
		if pl.s.Repeats > 1 {
			name += " #" + strconv.Itoa(r.Repeat)
		}
		var x, y, yb, yd, yw, ye, ye50, yq, yc, yr []float64
		for _, p := range pl.seriesOf(r.ID) {
			x = append(x, float64(p.Second)-r.Config.Warmup.Seconds())
			// A point is one real second: Speed simulated seconds.
			y = append(y, float64(p.Completed)/r.Config.Speed())
			yb = append(yb, float64(p.BacklogDue))
			yd = append(yd, float64(p.BacklogDelayed))
			yw = append(yw, p.RunQueueWaitMsPerS)
			yc = append(yc, p.HarnessCPUPercent)
			yr = append(yr, p.RedisCPUPercent)
			yq = append(yq, math.NaN())
			if p.QueueWaitP99Ms > 0 {
				yq[len(yq)-1] = p.QueueWaitP99Ms
			}
			// A second without a sample has no percentile (NaN: not drawn).
			ye, ye50 = append(ye, math.NaN()), append(ye50, math.NaN())
			if p.E2ESamples > 0 {
				ye[len(ye)-1], ye50[len(ye50)-1] = p.E2EP99Ms, p.E2EP50Ms
			}
		}
		tl.thr = append(tl.thr, report.Line{Label: name, X: x, Y: y})
		tl.backlog = append(tl.backlog, report.Line{Label: name, X: x, Y: yb})
		tl.delayed = append(tl.delayed, report.Line{Label: name, X: x, Y: yd})
		tl.cpuWait = append(tl.cpuWait, report.Line{Label: name, X: x, Y: yw})
		tl.e2e = append(tl.e2e, report.Line{Label: name, X: x, Y: ye})
		tl.e2e50 = append(tl.e2e50, report.Line{Label: name, X: x, Y: ye50})
		tl.queueWait = append(tl.queueWait, report.Line{Label: name, X: x, Y: yq})
		tl.harnessCPU = append(tl.harnessCPU, report.Line{Label: name + " harness", X: x, Y: yc})
		tl.redisCPU = append(tl.redisCPU, report.Line{Label: name + " Redis", X: x, Y: yr})
		tl.starved = append(tl.starved, starvedMarkers(name, x, yw)...)
	}
	return tl
}

// timePlots draws a cell's time plots: throughput, e2e p99 over time, the
// machine's health, the due backlog and the delayed jobs, each marking the
// window, the planned faults and the starved seconds.
func (pl *plots) timePlots(runs []summary.RunSummary, prefix, cond string) error {
	tl := pl.linesOf(runs)
	markers := []report.Marker{{X: 0, Label: "measuring"}, {X: runs[0].Config.Duration.Seconds(), Label: "producers stop"}}
	// Every run of a cell gets the same planned faults (same seed), so
	// one marker per planned fault serves every line.
	rc := runs[0].Config
	for _, ev := range faults.Plan(rc.Faults, rc.Seed, rc.Warmup+rc.Duration) {
		markers = append(markers, report.Marker{X: (ev.At - rc.Warmup).Seconds(), Label: faultLabel(ev)})
	}
	for _, sp := range rc.Spans() {
		// The profile's phases, each a band.
		markers = append(markers, report.Marker{X: (sp.Start - rc.Warmup).Seconds(), To: (sp.End - rc.Warmup).Seconds(), Label: sp.Name})
	}
	markers = append(markers, tl.starved...)
	rate := "jobs/s"
	if rc.Simulated() {
		rate = "jobs per simulated s"
	}
	type timePlot struct {
		name, title, unit string
		lines             []report.Line
	}
	if rc.Producers.Mode == "open" && len(tl.thr) > 0 {
		// The offered rate beside the completions: falling behind and
		// catching up show against it.
		tl.thr = append(tl.thr, offeredLines(runs)...)
	}
	plots := []timePlot{
		{"throughput", "Completed jobs per second against the offered rate", rate, tl.thr},
		{"e2e_over_time", "End-to-end latency p99 over time (each second's completions)", "ms", tl.e2e},
		{"queue_wait_over_time", "Queue wait p99 over time (each second's starts)", "ms", tl.queueWait},
		{"health", fmt.Sprintf("Machine health: the harness's wait for a CPU (suspect above %d ms/s)", health.RunQueueWaitMsPerS), "ms per s", tl.cpuWait},
		{"cpu", "Machine health: the harness's and Redis's CPU, % of one core", "%", append(tl.harnessCPU, tl.redisCPU...)},
		{"backlog", "Due backlog (acknowledged, due, not running)", "jobs", tl.backlog},
	}
	if rc.Producers.Delayed > 0 || rc.Workers.Fail > 0 {
		plots = append(plots, timePlot{"delayed", "Delayed jobs and retries not yet due", "jobs", tl.delayed})
	}
	var errs []error
	for _, p := range plots {
		path := filepath.Join(pl.dir, prefix+p.name)
		errs = append(errs, pl.keep(path)(report.TimePlot(path, pl.title(p.title), cond, p.unit, p.lines, markers)))
	}
	if len(rc.Phases) > 0 {
		// The profile's story on one time axis: offered against completed,
		// the backlog it leaves, and the latency it costs.
		path := filepath.Join(pl.dir, prefix+"phases")
		panels := []report.Panel{{YLabel: rate, Lines: tl.thr}, {YLabel: "due backlog (jobs)", Lines: tl.backlog},
			{YLabel: "e2e p99 (ms)", Lines: tl.e2e}, {YLabel: "e2e p50 (ms)", Lines: tl.e2e50}}
		errs = append(errs, pl.keep(path)(report.StackedTimePlot(path, pl.title("Phases: offered and completed jobs/s, due backlog, e2e p99 and p50"), cond, panels, markers)))
	}
	return errors.Join(errs...)
}

// offeredLines are the runs' offered rates over time, one line for each
// distinct profile: one "offered" when every run offered the same, else
// one per group of runs, named for them (phases relative to a capacity
// measured per backend offer each backend its own).
func offeredLines(runs []summary.RunSummary) []report.Line {
	var lines []report.Line
	var names [][]string
	for _, r := range runs {
		l := offeredLine(r.Config)
		i := slices.IndexFunc(lines, func(o report.Line) bool { return sameLine(o, l) })
		if i < 0 {
			lines, names = append(lines, l), append(names, nil)
			i = len(lines) - 1
		}
		if !slices.Contains(names[i], r.Label) {
			names[i] = append(names[i], r.Label)
		}
	}
	if len(lines) > 1 {
		for i := range lines {
			lines[i].Label = "offered " + strings.Join(names[i], ", ")
		}
	}
	return lines
}

// sameLine says two offered lines agree within 3% at every point (the
// probes of one worker-bound capacity differ by about that).
func sameLine(a, b report.Line) bool {
	if len(a.Y) != len(b.Y) {
		return false
	}
	for i := range a.Y {
		if math.Abs(a.Y[i]-b.Y[i]) > 0.03*max(math.Abs(a.Y[i]), 1) {
			return false
		}
	}
	return true
}

// offeredLine is the profile's offered rate over the run: producers.rate
// throughout, or each phase's (along its ramp), sampled at every phase's
// edges and every second between them.
func offeredLine(rc conditions.Config) report.Line {
	var x, y []float64
	end := rc.Warmup + rc.Duration
	for at := time.Duration(0); at <= end; at += time.Second / 4 {
		x = append(x, (at - rc.Warmup).Seconds())
		y = append(y, rc.RateAt(min(at, end-time.Millisecond)))
	}
	return report.Line{Label: "offered", X: x, Y: y}
}

func labelsOf(runs []summary.RunSummary) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range runs {
		if !seen[r.Label] {
			seen[r.Label] = true
			out = append(out, r.Label)
		}
	}
	return out
}

// mergedHist merges one histogram over the repeats of a backend in a cell.
func (pl *plots) mergedHist(runs []summary.RunSummary, label string, t hist.Tag) (*hdr.Histogram, int) {
	var out *hdr.Histogram
	n := 0
	for _, r := range runs {
		if r.Label != label {
			continue
		}
		n++
		hs := pl.hists[r.ID]
		if hs == nil || hs[t] == nil {
			continue
		}
		if out == nil {
			out = hist.New()
		}
		out.Merge(hs[t])
	}
	return out, n
}

// seriesOf returns a finished run's time series (kept for the plots).
func (pl *plots) seriesOf(id string) []engine.SeriesPoint { return pl.seriesByRun[id] }

// sweepMetrics are the metrics drawn against a swept field, with the
// figure's y label and the factor from the stored unit.
var sweepMetrics = []struct {
	metric, file, label string
	scale               float64
}{
	{"throughput", "throughput", "jobs/s", 1},
	{"e2e.p99", "e2e_p99", "e2e p99 (ms)", 1e-6},
	{"lateness.p99", "lateness_p99", "lateness p99 (ms)", 1e-6},
	{"claim.p99", "claim_p99", "claim call p99 (ms)", 1e-6},
	{"redis_cpu_us_per_job", "redis_cpu", "Redis CPU per job (µs)", 1},
	{"busiest_master_cpu_us_per_job", "busiest_master_cpu", "busiest Redis server's CPU per job (µs)", 1},
	{"cmds_per_job", "cmds", "Redis commands per job", 1},
	{"memory_per_job", "memory", "Redis memory per job (B)", 1},
}

// sweepAxis labels the x axis: the field, with "(ms)" when its values are
// durations.
func sweepAxis(groups []stats.Group, field string) string {
	for _, g := range groups {
		for _, v := range g.Vary {
			if k, val, _ := strings.Cut(v, "="); k == field {
				if _, err := strconv.ParseFloat(val, 64); err != nil {
					return field + " (ms)"
				}
				return field
			}
		}
	}
	return field
}

// sweepPlots writes, for every numeric swept field, one figure per sweep
// metric: x the field, a line per backend (and per value of the other
// varied fields), the median over the repeats with its 95% CI as bars.
// The floor and asynq are drawn like the job stores; the calibration is
// not in the statistics.
func (pl *plots) sweepPlots() error {
	blk := pl.sum.Statistics
	if blk == nil {
		return nil
	}
	var errs []error
	for _, field := range analysis.SweptFields(blk.Groups) {
		for _, m := range sweepMetrics {
			series := sweepSeries(blk.Groups, field, m.metric, m.scale)
			if len(series) == 0 {
				continue
			}
			name := filepath.Join(pl.dir, "sweep-"+strings.ReplaceAll(field, ".", "_")+"-"+m.file)
			title := fmt.Sprintf("%s against %s - %s", m.label, field, pl.s.Name)
			if err := pl.keep(name)(report.SweepPlot(name, title, pl.sweepConditions(), sweepAxis(blk.Groups, field), m.label, series)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// sweepSeries builds one line per backend and combination of the other
// varied fields, points sorted by the swept value.
func sweepSeries(groups []stats.Group, field, metric string, scale float64) []report.SweepSeries {
	type point struct{ x, y, lo, hi float64 }
	var lines analysis.Lines[point]
	for _, g := range groups {
		st, ok := g.Metric(metric)
		if !ok {
			continue
		}
		val, label, found := analysis.SweepLine(g, field)
		if !found {
			continue
		}
		x, _ := analysis.SweepX(val)
		p := point{x: x, y: st.Median * scale, lo: st.Median * scale, hi: st.Median * scale}
		if st.CI != nil {
			p.lo, p.hi = st.CI.Lo*scale, st.CI.Hi*scale
		}
		lines.Add(label, p)
	}
	var out []report.SweepSeries
	for i, pts := range lines.Sorted(func(a, b point) bool { return a.x < b.x }) {
		s := report.SweepSeries{Label: lines.Order[i]}
		for _, p := range pts {
			s.X, s.Y, s.Lo, s.Hi = append(s.X, p.x), append(s.Y, p.y), append(s.Lo, p.lo), append(s.Hi, p.hi)
		}
		out = append(out, s)
	}
	return out
}

// sweepConditions is the plan's conditions without the swept values: the
// first cell's short conditions, which name its own values of the swept
// fields, so the caption says "the rest as in this cell".
func (pl *plots) sweepConditions() string {
	if len(pl.sum.Runs) == 0 {
		return ""
	}
	return "other settings as in cell 1: " + pl.sum.Runs[0].Config.ShortConditions("")
}

// maxStarvedMarkers bounds the starved streaks marked per run.
const maxStarvedMarkers = 5

// starvedMarkers marks where a run's harness starts a streak of seconds
// starved of CPU (health.RunQueueWaitMsPerS), so the time plots show which
// seconds the machine, not the store, may have set.
func starvedMarkers(name string, x, wait []float64) []report.Marker {
	var out []report.Marker
	in := false
	for i, w := range wait {
		s := w > health.RunQueueWaitMsPerS
		if s && !in && len(out) < maxStarvedMarkers {
			out = append(out, report.Marker{X: x[i], Label: "starved " + name})
		}
		in = s
	}
	return out
}
