package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/report"
	"github.com/aebench/aebench/stats"
)

// fill copies what the engine measured into the run's summary and decides
// its status.
func (pr *planRunner) fill(rs *summary.RunSummary, res *engine.Result) {
	rs.StartedAt = res.StartedAt.UTC()
	rs.Window, rs.Throughput, rs.PeakBacklog = res.Window, res.Throughput, res.PeakBacklog
	rs.Ledger, rs.Counters, rs.Cost, rs.Harness = res.Ledger, res.Counters, res.Cost, res.Harness
	rs.Audit, rs.AuditError, rs.StallNote = res.Audit, res.AuditErr, res.StallNote
	rs.Prefill = res.Prefill
	rs.LatencyNs = map[string]map[string]float64{}
	for t, h := range res.Hists {
		if h != nil && h.TotalCount() > 0 {
			rs.LatencyNs[engine.Tag(t).String()] = report.Percentiles(h)
		}
	}
	rs.Recovery = res.Recovery
	rs.Problems = res.Ledger.Problems
	if c := res.Counters; res.FirstErr != nil {
		rs.Problems = append(rs.Problems, fmt.Sprintf("store errors: %d enqueue, %d claim, %d complete, %d fail, %d extend, %d recover, %d promote; first: %v",
			c.EnqueueErrors, c.ClaimErrors, c.CompleteErrors, c.FailErrors, c.ExtendErrors, c.RecoverErrors, c.PromoteErrors, res.FirstErr))
	}
	if !res.Window.Drained {
		rs.Problems = append(rs.Problems, fmt.Sprintf("drain did not finish within %s", rs.Config.Drain))
	}
	switch {
	case res.Err != nil:
		rs.Status, rs.Error = summary.StatusError, res.Err.Error()
	case res.Interrupted:
		rs.Status = summary.StatusInterrupted
	case !res.Ledger.OK:
		rs.Status = summary.StatusFailed
	case measuredNothing(rs) != "":
		rs.Status, rs.Error = summary.StatusFailed, measuredNothing(rs)
		rs.Problems = append(rs.Problems, rs.Error)
	default:
		rs.Status = summary.StatusOK
	}
}

// measuredNothing says why a run's window holds no measurement: no job
// was enqueued and none completed in it. Such a run proves nothing (a rate
// too low for the duration, a store that refused every call) and must not
// pass; "" when the window measured something.
func measuredNothing(rs *summary.RunSummary) string {
	if rs.Calibration || rs.Throughput.Completed > 0 || rs.Throughput.Enqueued > 0 {
		return ""
	}
	c := rs.Config
	why := fmt.Sprintf("measured nothing: no job was enqueued or completed in the %s measured window", c.Duration)
	if c.Producers.Mode == "open" && c.Producers.Rate*c.Duration.Seconds() < 1 {
		why += fmt.Sprintf(" (producers.rate %g jobs/s plans fewer than one job in duration %s: raise either)", c.Producers.Rate, c.Duration)
	}
	return why
}

// writeRunFiles hands the finished run to every output (.hgrm files,
// timeseries.csv, faults.csv and those --output turned on).
func (pr *planRunner) writeRunFiles(rs *summary.RunSummary, res *engine.Result) error {
	for _, op := range pr.outputs {
		if err := op.RunDone(rs, res); err != nil {
			return err
		}
	}
	return nil
}

// sample fans a run's second out to every output.
func (pr *planRunner) sample(r output.Run) func(engine.SeriesPoint) {
	return func(p engine.SeriesPoint) {
		for _, op := range pr.outputs {
			op.Sample(r, p)
		}
	}
}

// closeOutputs closes every output; an error goes to Logf, since the
// results line is already on its way.
func (pr *planRunner) closeOutputs() {
	for _, op := range pr.outputs {
		if err := op.Close(); err != nil {
			pr.o.Logf("output: %v", err)
		}
	}
}

// statusPrinter prints the once-a-second status line: redrawn in place on a
// terminal, one plain line each otherwise (CI logs).
type statusPrinter struct {
	w     io.Writer
	tty   bool
	width int // terminal columns; 0: unknown
	drawn bool
	// run and runs place the current run in the plan; run is its planned
	// length (warm-up + duration) and after the planned length of the runs
	// after it: the time left is an estimate without the drains.
	pos, runs  int
	run, after time.Duration
}

// place is "run 3/12, about 4m10s left" at elapsed into the current run.
func (sp *statusPrinter) place(elapsed time.Duration) string {
	left := sp.after + max(sp.run-elapsed, 0)
	return fmt.Sprintf("run %d/%d, ~%s left", sp.pos, sp.runs, left.Round(time.Second))
}

func (sp *statusPrinter) line(s engine.StatusLine) {
	txt := fitStatus(s, sp.place(s.Elapsed), sp.width)
	if sp.tty {
		fmt.Fprint(sp.w, "\r\033[K"+txt)
		sp.drawn = true
		return
	}
	fmt.Fprintln(sp.w, txt)
}

func (sp *statusPrinter) end() {
	if sp.tty && sp.drawn {
		fmt.Fprintln(sp.w)
		sp.drawn = false
	}
}

func verdictLine(rs *summary.RunSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  => %s: %s", rs.ID, strings.ToUpper(rs.Status))
	if rs.Error != "" {
		fmt.Fprintf(&b, " (%s)", rs.Error)
	}
	if e2e, ok := rs.LatencyNs["e2e"]; ok {
		fmt.Fprintf(&b, "; %.0f jobs/s, e2e p50 %s p99 %s", rs.Throughput.Completed, latText(rs, e2e["p50"]), latText(rs, e2e["p99"]))
	}
	l := rs.Ledger
	if rs.Status == summary.StatusError && l.Attempted == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "; %d acknowledged, %d completed, %d dead-lettered, lost %d%s, unexpected %d, duplicated %d, early %d",
		l.Acknowledged, l.Completed, l.DeadLettered, l.Lost, lostNote(rs), l.Unexpected, l.DuplicatedExecutions, l.StartedEarly)
	if l.EarlyDeclared != "" {
		fmt.Fprintf(&b, " (worst by %v, declared by the system: %s)", time.Duration(l.MaxEarlyNs).Round(time.Millisecond), l.EarlyDeclared)
	}
	if pf := rs.Prefill; pf != nil {
		fmt.Fprintf(&b, "\n     prefill: %d jobs (%d delayed past the run) loaded in %.1fs (%.0f jobs/s) before the run, not measured",
			pf.Jobs, pf.Delayed, pf.LoadS, pf.JobsPS)
	}
	if rv := rs.Recovery; rv != nil {
		fmt.Fprintf(&b, "\n     faults: %d landed, %d skipped; %d jobs in flight at them, %d started again (recovery p50 %s p99 %s max %s), %d duplicates, %d lost",
			rv.Landed, rv.Skipped, rv.Affected, rv.Restarted, latText(rs, rv.RecoveryNs["p50"]), latText(rs, rv.RecoveryNs["p99"]), latText(rs, rv.RecoveryNs["max"]), rv.Duplicates, rv.Lost)
	}
	for _, p := range l.Expected {
		b.WriteString("\n     " + p)
	}
	for _, p := range rs.Problems {
		b.WriteString("\n     problem: " + p)
	}
	return b.String()
}

// lostNote says why lost jobs did not fail the run.
func lostNote(rs *summary.RunSummary) string {
	if !rs.Ledger.LostExpected {
		return ""
	}
	if rs.Ledger.SeedVariant {
		return " (expected for this seed variant)"
	}
	if rs.Ledger.LostDeclared != "" {
		return " (declared by the system: " + rs.Ledger.LostDeclared + ")"
	}
	if rs.Config.Redis.Replicas > 0 && hasFault(rs.Config, faults.MasterKill) {
		return " (expected: a master failed over to a replica that replicates asynchronously)"
	}
	if rs.Config.Redis.Persistence == "none" {
		return " (expected without persistence)"
	}
	return fmt.Sprintf(" (expected: expect.lost %s with persistence %s)", rs.Config.Expect.Lost, rs.Config.Redis.Persistence)
}

// latText is fmtNs for a latency of run r: on simulated time a value
// below the run's resolution reads "<" the resolution, not as a measurement.
func latText(r *summary.RunSummary, ns float64) string {
	if r.ResolutionNs > 0 && ns < float64(r.ResolutionNs) {
		return "<" + fmtNs(float64(r.ResolutionNs))
	}
	return fmtNs(ns)
}

// fmtNs formats nanoseconds for people: 850µs, 1.24ms, 12.3ms, 125ms,
// 2.5s, 33.1min (verdict.FormatNs, the one formatter of every table).
func fmtNs(ns float64) string { return verdict.FormatNs(ns) }

func overheadSummary(sum *summary.Summary) *summary.Overhead {
	o := &summary.Overhead{Method: "a null-backend calibration run per matrix cell (in-process queue with blocking claim, " +
		"same load): its e2e minus each job's handler time (histogram e2e_minus_handler) is what the harness adds per job; every run also records " +
		"dispatch (Claim returned -> handler started) and bookkeeping (ledger and histogram work per job)"}
	for _, r := range sum.Runs {
		if !r.Calibration {
			continue
		}
		lat := func(tag, q string) float64 { return r.LatencyNs[tag][q] }
		o.Calibration = append(o.Calibration, summary.CalibrationInfo{RunID: r.ID, Cell: r.Cell,
			E2EP50Ns: lat("e2e", "p50"), E2EP99Ns: lat("e2e", "p99"),
			HandlerP50Ns: lat("handler", "p50"), HandlerP99Ns: lat("handler", "p99"),
			OverheadP50Ns: lat("e2e_minus_handler", "p50"), OverheadP99Ns: lat("e2e_minus_handler", "p99"),
			DispatchP50Ns: lat("dispatch", "p50"), DispatchP99Ns: lat("dispatch", "p99"),
			BookkeepingP50Ns: lat("bookkeeping", "p50"), BookkeepingP99Ns: lat("bookkeeping", "p99"),
			CollectorTickNs: r.Harness.CollectorTickMeanNs, CompletedPerS: r.Throughput.Completed,
			ClientCPUUsPerJob: r.Harness.ClientCPUUsPerJob, RunQueueWaitMsPerS: r.Harness.RunQueueWaitMsPerS,
			ClosedLoop: r.Config.Producers.Mode != "open"})
	}
	return o
}

// writeSummary replaces summary.json; it is written after every run, so a
// failure or Ctrl-C later never loses what was measured.
func (pr *planRunner) writeSummary() error {
	return summary.Write(filepath.Join(pr.dir, "summary.json"), pr.sum)
}

// finalize adds the statistics over repeats to summary.json, writes it a
// last time, and writes report.html from it.
func (pr *planRunner) finalize() error {
	if err := pr.writeSummary(); err != nil {
		return err
	}
	blk, err := verdict.AggregateSummary(pr.sum)
	if err != nil {
		return fmt.Errorf("statistics: %w", err)
	}
	pr.sum.Statistics, pr.sum.SchemaVersion = blk, stats.SchemaVersion
	pr.sum.Thresholds, pr.crossed = gate(pr.ths, pr.sum)
	if len(pr.s.Cells) > 0 {
		pr.sum.SLO = maxSustainable(pr.sum, pr.s.Cells[0].Base.SLO.E2EP99)
	}
	pr.sum.Scaling = scalingCurve(pr.sum)
	if !pr.o.NoPlots {
		if err := pr.sweepPlots(); err != nil {
			pr.o.Logf("sweep plots: %v", err)
			if pr.sum.PlotError != "" {
				pr.sum.PlotError += "; "
			}
			pr.sum.PlotError += err.Error()
		}
	}
	return pr.writeSummary()
}

// ErrDirNotEmpty: the results directory named by Options.Dir (--out)
// already holds files; a run never mixes its files with another's.
var ErrDirNotEmpty = errors.New("results directory is not empty")

// makeResultsDir creates the run's results directory: Options.Dir exactly
// (which must be missing or empty), else OutDir/<UTC time>-<scenario>.
func makeResultsDir(o Options, started time.Time, name string) (string, error) {
	dir := o.Dir
	if dir == "" {
		dir = filepath.Join(o.OutDir, started.UTC().Format("20060102T150405Z")+"-"+name)
	} else if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("%s: %w (%d entries; name a new directory)", dir, ErrDirNotEmpty, len(ents))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results folder: %w", err)
	}
	return dir, nil
}

// writeCompleteFlag writes the results directory's complete flag, the
// last file of a run: every planned run ran without an infrastructure
// error and every other file is written. aebench compare refuses a
// directory without it (a run that failed or was killed mid-way).
func writeCompleteFlag(dir string, sum *summary.Summary) error {
	text := fmt.Sprintf("complete: every planned run ran and every file was written\nscenario: %s\nruns: %d\nfinished_at: %s\n",
		sum.Scenario.Name, len(sum.Runs), sum.FinishedAt.Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, verdict.CompleteFlag), []byte(text), 0o644); err != nil {
		return fmt.Errorf("complete flag: %w", err)
	}
	return nil
}

// fitStatus formats the status line: one format for the whole plan,
// led by the run's place in the plan and the time left, cut to width-1
// columns when it is longer (0: no limit; a line as wide as the terminal
// would wrap).
func fitStatus(s engine.StatusLine, place string, width int) string {
	p99 := "-"
	if s.E2EP99 > 0 {
		p99 = fmtNs(float64(s.E2EP99))
	}
	line := fmt.Sprintf("%s [%s] %3.0fs %-7s enq %5.0f/s done %5.0f/s due %5d delayed %5d in flight %3d e2e p99 %s",
		place, s.RunID, s.Elapsed.Seconds(), s.Phase, s.EnqPerSec, s.DonePerSec, s.Backlog, s.Delayed, s.InFlight, p99)
	if r := []rune(line); width > 0 && len(r) >= width {
		line = string(r[:max(width-1, 0)])
	}
	return line
}

// hasFault reports whether c schedules a fault of kind k.
func hasFault(c scenario.Config, k faults.Kind) bool {
	for _, f := range c.Faults {
		if f.Kind == k {
			return true
		}
	}
	return false
}
