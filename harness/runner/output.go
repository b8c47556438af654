package runner

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/health"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/report"
	"github.com/aebench/aebench/stats"
)

// fill copies what the engine measured into the run's summary and decides
// its status.
func (pr *planRunner) fill(rs *summary.RunSummary, res *engine.Result) {
	rs.StartedAt = res.StartedAt.UTC()
	rs.Window, rs.Throughput, rs.PeakBacklog = res.Window, res.Throughput, res.PeakBacklog
	rs.Ledger, rs.Counters, rs.Cost, rs.Harness = res.Ledger, res.Counters, res.Cost, res.Harness
	rs.Audit, rs.AuditError, rs.StallNote, rs.Served = res.Audit, res.AuditErr, res.StallNote, res.Served
	rs.Census, rs.CensusError, rs.Snapshot = res.Census, res.CensusErr, res.Snapshot
	rs.Prefill = res.Prefill
	rs.LatencyNs = map[string]map[string]float64{}
	for t, h := range res.Hists {
		if h != nil && h.TotalCount() > 0 {
			rs.LatencyNs[hist.Tag(t).String()] = report.Percentiles(h)
		}
	}
	rs.Recovery = res.Recovery
	rs.TimeBase = summary.NewTimeBase(rs.Config.Speed(), rs.Config.Redis.HZ, rs.ResolutionNs, rs.LatencyNs)
	rs.Phases = phaseResults(rs.Config, res)
	rs.Mix = mixResult(rs.Config, res.Mix)
	var baseline int64
	if res.Cost != nil {
		baseline = res.Cost.BaselineMemory
	}
	if rs.Drift = driftResults(rs.Config, res, baseline); rs.Drift != nil {
		for _, v := range rs.Drift.Verdicts {
			if v.Word == "drifts" {
				rs.Problems = append(rs.Problems, fmt.Sprintf("drift: %s drifts, %.2fx from the first window to the last (95%% interval of the trend %.2f-%.2fx)", v.Metric, v.Ratio, v.Lo, v.Hi))
			}
		}
	}
	rs.Problems = append(rs.Problems, undelivered(rs.Phases)...)
	rs.Health = health.Judge(res.Harness, rs.LatencyNs, res.StallNote, callEvery(rs.Config), rs.Config.Speed())
	rs.Ledger.AttributeLost(lossContext(rs.Config, res.Cost, res.Counters.OOMRefused))
	rs.Problems = slices.Concat(rs.Ledger.Problems, rs.Problems)
	if c := res.Counters; res.FirstErr != nil {
		rs.Problems = append(rs.Problems, fmt.Sprintf("store errors: %d enqueue, %d claim, %d complete, %d fail, %d extend, %d recover, %d promote; first: %v",
			c.EnqueueErrors, c.ClaimErrors, c.CompleteErrors, c.FailErrors, c.ExtendErrors, c.RecoverErrors, c.PromoteErrors, res.FirstErr))
	}
	if c := res.Cost; c != nil && c.EvictedKeys > 0 {
		rs.Problems = append(rs.Problems, evictionText(rs.Config.Redis, c.EvictedKeys, rs.Ledger))
	}
	if c := rs.Census; c != nil && c.LeakCount() > 0 {
		rs.Problems = append(rs.Problems, leakText(*c))
	}
	if o := res.Counters.OOMRefused; o.Any() {
		rs.Problems = append(rs.Problems, oomText(o, rs.Ledger))
	}
	if !res.Window.Drained && !res.Window.Settled {
		rs.Problems = append(rs.Problems, fmt.Sprintf("drain did not finish within %s", rs.Config.Drain))
	}
	if len(res.WorkersDied) > 0 {
		rs.Problems = append(rs.Problems, fmt.Sprintf("worker process(es) exited during the run, not killed by a fault, and their jobs stopped: %s",
			strings.Join(res.WorkersDied, "; ")))
	}
	switch {
	case res.Err != nil:
		rs.Status, rs.Error = summary.StatusError, res.Err.Error()
	case len(res.WorkersDied) > 0:
		rs.Status, rs.Error = summary.StatusFailed, "a worker process died during the run: "+res.WorkersDied[0]
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

// callEvery is how often each producer means to call Enqueue, in the
// run's time base like its latencies (0 in a closed loop).
func callEvery(c conditions.Config) time.Duration {
	p := c.Producers
	if p.Mode != "open" || p.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) * float64(p.Count*p.Batch) / p.Rate)
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

// histogramLog is the writer of the run's interval histograms, from the
// output that keeps them (the .hlog); nil when none does.
func (pr *planRunner) histogramLog(r output.Run, conditions string) (*hist.LogWriter, error) {
	for _, op := range pr.outputs {
		if hl, ok := op.(output.HistogramLogger); ok {
			return hl.HistogramLog(r, conditions)
		}
	}
	return nil, nil
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

// checkpoint has the outputs keep the summary as it stands (summary.json,
// output.Checkpointer): before the first run and after every run, so a
// failure or Ctrl-C later never loses what was measured.
func (pr *planRunner) checkpoint() error {
	var errs []error
	for _, op := range pr.outputs {
		if c, ok := op.(output.Checkpointer); ok {
			errs = append(errs, c.Checkpoint(pr.sum))
		}
	}
	return errors.Join(errs...)
}

// finalize finishes the summary (package analysis: statistics over
// repeats, ratios, the harness floor, thresholds, SLO, scaling) before any
// output reads it, and keeps summary.json current.
func (pr *planRunner) finalize() error {
	sum := pr.sum
	sum.HarnessOverhead = analysis.OverheadSummary(sum)
	analysis.SetRatios(sum)
	analysis.SetHarnessFloor(sum)
	analysis.SetClientSplit(sum)
	analysis.SetHealth(sum)
	blk, err := verdict.AggregateSummary(sum)
	if err != nil {
		_ = pr.checkpoint()
		return fmt.Errorf("statistics: %w", err)
	}
	sum.Statistics, sum.SchemaVersion = blk, stats.SchemaVersion
	sum.Thresholds, pr.crossed = analysis.Gate(pr.ths, sum)
	if len(pr.s.Cells) > 0 {
		sum.SLO = analysis.MaxSustainable(sum, pr.s.Cells[0].Base.SLO.E2EP99)
	}
	sum.Scaling = analysis.ScalingCurve(sum)
	return pr.checkpoint()
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
		p99 = verdict.FormatNs(float64(s.E2EP99))
	}
	// A starved second leads the line, where a narrow terminal keeps it.
	starved := ""
	if s.RunQueueWaitMsPerS > health.RunQueueWaitMsPerS {
		starved = fmt.Sprintf(" STARVED (cpu wait %.0fms/s)", s.RunQueueWaitMsPerS)
	}
	line := fmt.Sprintf("%s [%s]%s %3.0fs %-7s enq %5.0f/s done %5.0f/s due %5d delayed %5d in flight %3d e2e p99 %s",
		place, s.RunID, starved, s.Elapsed.Seconds(), s.Phase, s.EnqPerSec, s.DonePerSec, s.Backlog, s.Delayed, s.InFlight, p99)
	if r := []rune(line); width > 0 && len(r) >= width {
		line = string(r[:max(width-1, 0)])
	}
	return line
}

// evictionText says what Redis evicted at maxmemory and what the ledger
// and the read-back found of the jobs: under an evicting policy a lost
// job's record or index entry was among the keys evicted.
func evictionText(rc conditions.RedisConfig, evicted int64, l ledger.Report) string {
	policy := rc.MaxMemoryPolicy
	if policy == "" {
		policy = "the server's default"
	}
	s := fmt.Sprintf("Redis evicted %d keys at maxmemory %dMiB (%s; a memory_pressure fault's ballast included)", evicted, rc.MaxMemory>>20, policy)
	if l.Lost > 0 {
		s += fmt.Sprintf(": %d acknowledged jobs lost, by cause %s; the read-back found them %s", l.Lost, ledger.FormatStates(l.LostCauses), ledger.FormatStates(l.LostStates))
	}
	return s
}

// leakText names what the queue leaked, by kind with a count and examples.
func leakText(c jobstore.Census) string {
	kinds := slices.Sorted(maps.Keys(c.Leaks))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d (e.g. %s)", k, c.Leaks[k], strings.Join(c.Examples[k], ", "))
	}
	return fmt.Sprintf("key census after the drain: the queue leaked %d: %s", c.LeakCount(), strings.Join(parts, "; "))
}

// oomText says what Redis refused at maxmemory and what became of it.
func oomText(o summary.OOMRefusals, l ledger.Report) string {
	s := fmt.Sprintf("Redis refused writes at maxmemory (OOM): %d jobs' enqueues (refused, not stored: %d in the ledger), %d completes, %d fails, %d recovers",
		o.Enqueued, l.Refused, o.Completes, o.Fails, o.Recovers)
	if l.CompleteRefused > 0 {
		s += fmt.Sprintf("; of the %d jobs whose Complete was refused, %d completed later (their lease lapsed and they ran again) and %d did not (stuck)",
			l.CompleteRefused, l.CompleteRefusedRetried, l.CompleteRefused-l.CompleteRefusedRetried)
	}
	return s
}

// lossContext is what of the run's Redis can make a job vanish without
// the store dropping it: evictions, and a restart from a persistence that
// does not keep every acknowledged write.
func lossContext(c conditions.Config, cost *summary.CostReport, oom summary.OOMRefusals) ledger.LossContext {
	lc := ledger.LossContext{OOMRefused: oom.Any()}
	if cost != nil {
		lc.EvictedKeys = cost.EvictedKeys
	}
	if !conditions.KeepsAcknowledged(c.Redis.Persistence) {
		for _, f := range c.Faults {
			lc.LossyRestart = lc.LossyRestart || f.Descriptor().RestartsRedis
		}
	}
	return lc
}
