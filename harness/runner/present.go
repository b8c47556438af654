package runner

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// plotTags are the histograms drawn as percentile plots, with their titles.
var plotTags = []struct {
	tag   engine.Tag
	title string
}{
	{engine.TagE2E, "End-to-end latency (intended enqueue -> completed)"},
	{engine.TagQueueWait, "Queue wait (due -> handler start)"},
	{engine.TagLateness, "Lateness of delayed jobs and retries (start - RunAt)"},
	{engine.TagEnqueue, "Enqueue call"},
	{engine.TagClaim, "Claim call (calls that returned jobs)"},
	{engine.TagComplete, "Complete call"},
	{engine.TagAckWait, "Ack wait (handler end -> Complete acknowledged)"},
	{engine.TagRecovery, "Recovery (fault -> next handler start of each job in flight at it)"},
}

// cellRuns returns the runs of a cell that have numbers, calibration excluded.
func (pr *planRunner) cellRuns(cell int) []summary.RunSummary {
	var out []summary.RunSummary
	for _, r := range pr.sum.Runs {
		if r.Cell == cell && !r.Calibration && r.Status != summary.StatusError && r.Status != summary.StatusNotApplicable {
			out = append(out, r)
		}
	}
	return out
}

func (pr *planRunner) cellPrefix(c scenario.Cell) string {
	if len(pr.s.Cells) > 1 {
		return fmt.Sprintf("c%d-", c.Index)
	}
	return ""
}

func cellConditions(runs []summary.RunSummary) string {
	for _, r := range runs {
		if r.Redis != nil {
			return r.Conditions
		}
	}
	if len(runs) > 0 {
		return runs[0].Conditions
	}
	return ""
}

func cellShortConditions(runs []summary.RunSummary) string {
	for _, r := range runs {
		if r.Redis != nil {
			return r.Config.ShortConditions(r.Redis.Version)
		}
	}
	if len(runs) > 0 {
		return runs[0].Config.ShortConditions("")
	}
	return ""
}

// claimKind says how a run's backend waits for work: that bounds its
// end-to-end latency at low load. A backend that polls on an interval of
// its own (registry.Option.ClaimPoll, asynq's task_check_interval) shows
// that interval, not the scenario's store.poll_interval it ignores.
func (pr *planRunner) claimKind(r summary.RunSummary) string {
	for _, c := range r.Capabilities {
		if c == "blocking-claim" {
			return "blocking"
		}
	}
	if be, err := pr.o.Registry.Lookup(r.Backend); err == nil {
		if be.Driver != nil {
			return "own loop"
		}
		for _, o := range be.Options {
			if !o.ClaimPoll {
				continue
			}
			if v, ok := r.Config.Backend.Options[o.Name]; ok {
				return "poll " + v
			}
			return "poll " + o.Default
		}
	}
	return "poll " + r.Config.Store.PollInterval.String()
}

// plots writes, per cell, one percentile plot per latency with a line per
// backend (repeats merged), and throughput and backlog over time. The null
// calibration run is left out: it is not a job store.
func (pr *planRunner) plots() error {
	var errs []error
	for _, c := range pr.s.Cells {
		runs := pr.cellRuns(c.Index)
		if len(runs) == 0 {
			continue
		}
		cond := cellShortConditions(runs)
		prefix := pr.cellPrefix(c)
		title := func(s string) string { return s + " - " + pr.s.Name }
		for _, pt := range plotTags {
			var series []report.LatencySeries
			any := false
			for _, label := range labelsOf(runs) {
				merged, n := pr.mergedHist(runs, label, pt.tag)
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
			if err := report.PercentilePlot(filepath.Join(pr.dir, prefix+pt.tag.String()), title(pt.title), cond, series); err != nil {
				errs = append(errs, err)
			}
		}
		var thr, backlog, delayed []report.Line
		for _, r := range runs {
			name := r.Label
			if pr.s.Repeats > 1 {
				name += " #" + strconv.Itoa(r.Repeat)
			}
			var x, y, yb, yd []float64
			for _, p := range pr.seriesOf(r.ID) {
				x = append(x, float64(p.Second)-r.Config.Warmup.Seconds())
				// A point is one real second: Speed simulated seconds.
				y = append(y, float64(p.Completed)/r.Config.Speed())
				yb = append(yb, float64(p.BacklogDue))
				yd = append(yd, float64(p.BacklogDelayed))
			}
			thr = append(thr, report.Line{Label: name, X: x, Y: y})
			backlog = append(backlog, report.Line{Label: name, X: x, Y: yb})
			delayed = append(delayed, report.Line{Label: name, X: x, Y: yd})
		}
		markers := []report.Marker{{X: 0, Label: "measuring"}, {X: runs[0].Config.Duration.Seconds(), Label: "producers stop"}}
		// Every run of a cell gets the same planned faults (same seed), so
		// one marker per planned fault serves every line.
		rc := runs[0].Config
		for _, ev := range faults.Plan(rc.Faults, rc.Seed, rc.Warmup+rc.Duration) {
			markers = append(markers, report.Marker{X: (ev.At - rc.Warmup).Seconds(), Label: faultLabel(ev)})
		}
		if err := report.TimePlot(filepath.Join(pr.dir, prefix+"throughput"), title("Completed jobs per second"), cond,
			"jobs/s", thr, markers); err != nil {
			errs = append(errs, err)
		}
		if err := report.TimePlot(filepath.Join(pr.dir, prefix+"backlog"), title("Due backlog (acknowledged, due, not running)"), cond,
			"jobs", backlog, markers); err != nil {
			errs = append(errs, err)
		}
		if rc.Producers.Delayed > 0 || rc.Workers.Fail > 0 {
			if err := report.TimePlot(filepath.Join(pr.dir, prefix+"delayed"), title("Delayed jobs and retries not yet due"), cond,
				"jobs", delayed, markers); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
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
func (pr *planRunner) mergedHist(runs []summary.RunSummary, label string, t engine.Tag) (*hdr.Histogram, int) {
	var out *hdr.Histogram
	n := 0
	for _, r := range runs {
		if r.Label != label {
			continue
		}
		n++
		hs := pr.hists[r.ID]
		if hs == nil || hs[t] == nil {
			continue
		}
		if out == nil {
			out = engine.NewHist()
		}
		out.Merge(hs[t])
	}
	return out, n
}

// seriesOf returns a finished run's time series (kept for the plots).
func (pr *planRunner) seriesOf(id string) []engine.SeriesPoint { return pr.seriesByRun[id] }

// printTables prints, per cell, the comparison of backends under one set of
// conditions, then the harness overhead measured in that cell.
func (pr *planRunner) printTables(w io.Writer) {
	for _, c := range pr.s.Cells {
		runs := pr.cellRuns(c.Index)
		var calib []summary.RunSummary
		for _, r := range pr.sum.Runs {
			if r.Cell == c.Index && r.Calibration && r.Status != summary.StatusError {
				calib = append(calib, r)
			}
		}
		if len(runs) == 0 && len(calib) == 0 {
			continue
		}
		fmt.Fprintln(w)
		head := fmt.Sprintf("== %s", pr.s.Name)
		if len(pr.s.Cells) > 1 {
			head += fmt.Sprintf(", cell %d", c.Index)
		}
		for _, v := range c.Vary {
			head += " " + v
		}
		fmt.Fprintln(w, head+" ==")
		if len(runs) > 0 {
			fmt.Fprintln(w, "conditions: "+cellConditions(runs))
			fmt.Fprintln(w)
			pr.latencyTable(w, runs)
			ledgerNotes(w, runs, pr.s.Repeats)
			pr.recoveryTable(w, runs)
			ackTable(w, runs, pr.s.Repeats)
			fmt.Fprintln(w)
			pr.costTable(w, runs)
		}
		pr.referenceNotes(w, c.Index, runs)
		for _, r := range calib {
			fmt.Fprintln(w)
			fmt.Fprintln(w, calibrationHeadline(r))
			fmt.Fprintln(w, calibrationLine(r))
		}
		for _, r := range runs {
			if d, ok := r.LatencyNs["dispatch"]; ok {
				fmt.Fprintf(w, "harness in the %s run: dispatch (claim returned -> handler start) p50 %s p99 %s; bookkeeping per job p50 %s; "+
					"status/collector %s per second; client CPU %.1f µs/job%s; CPU run-queue wait %.1f ms/s\n",
					r.ID, fmtNs(d["p50"]), fmtNs(d["p99"]), fmtNs(r.LatencyNs["bookkeeping"]["p50"]), fmtNs(float64(r.Harness.CollectorTickMeanNs)),
					r.Harness.ClientCPUUsPerJob, fixedPart(r), r.Harness.RunQueueWaitMsPerS)
			}
		}
	}
}

func runName(r summary.RunSummary, repeats int) string {
	if repeats > 1 {
		return r.Label + " #" + strconv.Itoa(r.Repeat)
	}
	return r.Label
}

func (pr *planRunner) latencyTable(w io.Writer, runs []summary.RunSummary) {
	// Within 120 columns: e2e p99.9, lateness p50 and claim latency are in
	// summary.json, the .hgrm files and report.html.
	header := []string{"backend", "status", "claim", "offered", "done/s", "e2e p50", "e2e p99", "e2e max",
		"x calib", "late p99", "acked", "lost", "dup", "early", "dead"}
	var rows [][]string
	for _, r := range runs {
		lat := func(tag, q string) string {
			m, ok := r.LatencyNs[tag]
			if !ok {
				return "-"
			}
			return latText(&r, m[q])
		}
		offered := "closed"
		if r.Throughput.Offered > 0 {
			offered = fmtRate(r.Throughput.Offered)
		}
		l := r.Ledger
		rows = append(rows, []string{runName(r, pr.s.Repeats), r.Status, pr.claimKind(r), offered, fmtRate(r.Throughput.Completed),
			lat("e2e", "p50"), lat("e2e", "p99"), lat("e2e", "max"),
			floorCell(r), lat("lateness", "p99"),
			strconv.FormatInt(l.Acknowledged, 10), strconv.FormatInt(l.Lost, 10), strconv.FormatInt(l.DuplicatedExecutions, 10),
			strconv.FormatInt(l.StartedEarly, 10), strconv.FormatInt(l.DeadLettered, 10)})
	}
	_ = report.Table(w, header, rows)
	for _, r := range runs {
		if r.HarnessFloor != nil && r.HarnessFloor.At {
			fmt.Fprintln(w, "x calib: e2e minus handler p99 over the calibration run's; * within 2x, at the harness's floor: the harness may set that tail, read it as an upper bound")
			break
		}
	}
	// An empty cell says why, under the table rather than in a column.
	for _, r := range runs {
		if _, ok := r.LatencyNs["e2e"]; !ok && r.Ledger.Completed > 0 {
			why := "no job completed in the measured window without a retry"
			if r.Prefill != nil && r.Prefill.Jobs > 0 {
				why = "only prefilled jobs ran: their wait is the backlog's, not an arrival's, so e2e is not measured"
			}
			fmt.Fprintf(w, "note: %s: e2e \"-\": %s\n", runName(r, pr.s.Repeats), why)
		}
	}
}

func calibrationLine(r summary.RunSummary) string {
	e2e, h, net := r.LatencyNs["e2e"], r.LatencyNs["handler"], r.LatencyNs["e2e_minus_handler"]
	// Closed loop keeps a backlog waiting, so there e2e minus handler is
	// mostly time queued behind it, not harness work.
	what := "what the harness adds per job"
	if r.Config.Producers.Mode != "open" {
		what = fmt.Sprintf("the harness's per-job cost plus queueing behind a closed-loop backlog of up to %d (harness work proper: dispatch and bookkeeping below)", r.Config.Producers.MaxBacklog)
	}
	return fmt.Sprintf("harness overhead, from %s (null backend: in process, calibration, not a job store, %.0f jobs/s): "+
		"e2e p50 %s p99 %s, handler p50 %s p99 %s; e2e minus handler, job by job: p50 %s p99 %s = %s",
		r.ID, r.Throughput.Completed, fmtNs(e2e["p50"]), fmtNs(e2e["p99"]), fmtNs(h["p50"]), fmtNs(h["p99"]),
		fmtNs(net["p50"]), fmtNs(net["p99"]), what)
}

// faultLabel is a plot marker's text: the kind, shortened, and the point.
func faultLabel(ev faults.Event) string {
	k := strings.NewReplacer("worker_", "", "recoverer_", "rec-", "redis_", "redis-", "net_", "net-").Replace(string(ev.Fault.Kind))
	if ev.Point != "" && ev.Point != faults.BetweenSteps {
		k += "@" + string(ev.Point)
	}
	return k
}

// recoveryTable prints, for runs with faults, what the faults did.
func (pr *planRunner) recoveryTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	for _, r := range runs {
		rv := r.Recovery
		if rv == nil {
			continue
		}
		kinds := make([]string, 0, len(rv.Faults))
		for _, k := range faults.Kinds() {
			if n := rv.Faults[k]; n > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
		}
		lat := func(q string) string {
			if v, ok := rv.RecoveryNs[q]; ok {
				return latText(&r, v)
			}
			return "-"
		}
		lost := strconv.FormatInt(r.Ledger.Lost, 10)
		if r.Ledger.LostExpected {
			lost += " (expected)"
		}
		rows = append(rows, []string{runName(r, pr.s.Repeats), r.Status, strconv.Itoa(rv.Landed), strconv.Itoa(rv.Skipped),
			strings.Join(kinds, ", "), strconv.Itoa(rv.Affected), strconv.Itoa(rv.Restarted), lat("p50"), lat("p99"), lat("max"),
			strconv.Itoa(rv.Duplicates), strconv.FormatInt(r.Ledger.DuplicatedExecutions, 10), lost})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "faults: affected = jobs in flight at a fault; recovery = fault -> the job's next handler start; dup/fault = affected jobs whose handler had started and ran again; dup/run and lost from the ledger")
	_ = report.Table(w, []string{"backend", "status", "faults", "skipped", "kinds", "affected", "restarted",
		"recovery p50", "recovery p99", "recovery max", "dup/fault", "dup/run", "lost"}, rows)
}

// fmtRate writes jobs/s with the digits a slow rate needs (0.02, not 0).
func fmtRate(v float64) string {
	switch {
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// fixedPart splits a run's client CPU per job into the fixed part per
// second (measured idle after the drain) and the part per job, so a
// low-rate run's µs/job is not read as the cost of a job.
func fixedPart(r summary.RunSummary) string {
	h := r.Harness
	if h.ClientFixedUsPerS <= 0 {
		return ""
	}
	return fmt.Sprintf(" (= %.1f ms a second whatever the rate, measured idle after the drain, + %.1f µs a job)", h.ClientFixedUsPerS/1e3, h.ClientPerJobUs)
}
