package output

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// terminal prints what a person reads in the terminal: as each run is
// recorded its verdict line (to Plan.Progress), and at the plan's end,
// per cell, the backends side by side (latency, ledger notes, recovery,
// acknowledgements, Redis cost, the references), then the matrix of
// cells, the thresholds, the SLO and the scaling curve (to Plan.Stdout).
type terminal struct {
	base
	planView
	out, progress io.Writer
	reg           *registry.Registry
}

func newTerminal(string) (Output, error) { return &terminal{}, nil }

func (t *terminal) Start(p Plan) error {
	t.s, t.out, t.progress, t.reg = p.Scenario, p.Stdout, p.Progress, p.Registry
	if t.out == nil {
		t.out = io.Discard
	}
	if t.progress == nil {
		t.progress = io.Discard
	}
	if t.reg == nil {
		t.reg = registry.Builtin()
	}
	return t.base.Start(p)
}

// RunRecorded prints the run's verdict line.
func (t *terminal) RunRecorded(rs *summary.RunSummary) {
	if rs.Status == summary.StatusNotApplicable {
		fmt.Fprintf(t.progress, "  => %s: not applicable: %s\n", rs.ID, rs.NotApplicable)
		return
	}
	fmt.Fprintln(t.progress, verdictLine(rs))
}

func (t *terminal) PlanDone(sum *summary.Summary) error {
	t.sum = sum
	t.printTables(t.out)
	t.printMatrix(t.out)
	printThresholds(t.out, sum.Thresholds)
	printSuspectGate(t.out, sum)
	printSLO(t.out, sum.SLO)
	printScaling(t.out, sum.Scaling)
	return nil
}

// calibrationHeadline is the calibration's verdict on the harness in one
// line: its own tail and CPU per job under this cell's load.
func calibrationHeadline(r summary.RunSummary) string {
	loop := fmt.Sprintf("%.0f jobs/s open loop", r.Config.Producers.Rate)
	if r.Config.Producers.Mode != "open" {
		loop = fmt.Sprintf("closed loop, %.0f jobs/s", r.Throughput.Completed)
	}
	s := fmt.Sprintf("calibration: harness p99 %s (e2e minus handler), harness CPU %.1f µs/job (null store, %s)",
		fmtNs(r.LatencyNs["e2e_minus_handler"]["p99"]), r.Harness.ClientCPUUsPerJob, loop)
	if w := r.Harness.RunQueueWaitMsPerS; w > 0 {
		s += fmt.Sprintf("; its threads waited %.1f ms/s for a CPU", w)
	}
	return s
}

// printMatrix prints, for a plan of several cells, each backend's jobs/s
// and e2e p50 in each cell (medians over the repeats), so a dimension such
// as network.rtt reads across at a glance; nothing for one cell. Backends
// are the rows and cells the columns, or the other way round when there
// are more cells than backends, so the table stays narrow; columns are
// named "cell N" with a legend under the table.
func (t *terminal) printMatrix(w io.Writer) {
	if len(t.s.Cells) < 2 {
		return
	}
	type key struct {
		label string
		cell  int
	}
	tp, e2e := map[key][]float64{}, map[key][]float64{}
	var labels []string
	seen := map[string]bool{}
	for _, r := range t.sum.Runs {
		if r.Calibration || (r.Status != summary.StatusOK && r.Status != summary.StatusFailed) {
			continue
		}
		k := key{r.Label, r.Cell}
		tp[k] = append(tp[k], r.Throughput.Completed)
		if l, ok := r.LatencyNs["e2e"]; ok {
			e2e[k] = append(e2e[k], l["p50"])
		}
		if !seen[r.Label] {
			seen[r.Label] = true
			labels = append(labels, r.Label)
		}
	}
	text := func(l string, cell int) string {
		k := key{l, cell}
		if len(tp[k]) == 0 {
			return "-"
		}
		t := fmt.Sprintf("%.0f/s", median(tp[k]))
		if len(e2e[k]) > 0 {
			t += " " + fmtNs(median(e2e[k]))
		}
		return t
	}
	var cells []string
	for _, c := range t.s.Cells {
		cells = append(cells, fmt.Sprintf("cell %d", c.Index))
	}
	rows, cols := labels, cells
	at := func(r, c int) string { return text(labels[r], t.s.Cells[c].Index) }
	if len(cells) > len(labels) {
		rows, cols = cells, labels
		at = func(r, c int) string { return text(labels[c], t.s.Cells[r].Index) }
	}
	fmt.Fprintf(w, "\n== %s across the matrix: jobs/s and e2e p50 (medians over the repeats) ==\n", t.s.Name)
	fmt.Fprintf(w, "%-12s", "")
	for _, c := range cols {
		fmt.Fprintf(w, "  %-16s", c)
	}
	fmt.Fprintln(w)
	for r, name := range rows {
		fmt.Fprintf(w, "%-12s", name)
		for c := range cols {
			fmt.Fprintf(w, "  %-16s", at(r, c))
		}
		fmt.Fprintln(w)
	}
	for _, c := range t.s.Cells {
		fmt.Fprintf(w, "cell %d: %s\n", c.Index, strings.Join(c.Vary, " "))
	}
}

// median is the middle value, or the mean of the two middle ones for an
// even count (the upper one alone made a median of two repeats their max).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// claimKind says how a run's backend waits for work: that bounds its
// end-to-end latency at low load. A backend that polls on an interval of
// its own (registry.Option.ClaimPoll, asynq's task_check_interval) shows
// that interval, not the scenario's store.poll_interval it ignores.
func (t *terminal) claimKind(r summary.RunSummary) string {
	for _, c := range r.Capabilities {
		if c == "blocking-claim" {
			return "blocking"
		}
	}
	if be, err := t.reg.Lookup(r.Backend); err == nil {
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

// printTables prints, per cell, the comparison of backends under one set of
// conditions, then the harness overhead measured in that cell.
func (t *terminal) printTables(w io.Writer) {
	for _, c := range t.s.Cells {
		runs := t.cellRuns(c.Index)
		var calib []summary.RunSummary
		for _, r := range t.sum.Runs {
			if r.Cell == c.Index && r.Calibration && r.Status != summary.StatusError {
				calib = append(calib, r)
			}
		}
		if len(runs) == 0 && len(calib) == 0 {
			continue
		}
		fmt.Fprintln(w)
		head := fmt.Sprintf("== %s", t.s.Name)
		if len(t.s.Cells) > 1 {
			head += fmt.Sprintf(", cell %d", c.Index)
		}
		for _, v := range c.Vary {
			head += " " + v
		}
		fmt.Fprintln(w, head+" ==")
		if len(runs) > 0 {
			fmt.Fprintln(w, "conditions: "+cellConditions(runs))
			if tl := timeBaseLine(&runs[0]); tl != "" {
				fmt.Fprintln(w, tl)
			}
			fmt.Fprintln(w)
			t.latencyTable(w, runs)
			t.phaseTable(w, runs)
			t.mixTable(w, runs)
			ledgerNotes(w, runs, t.s.Repeats)
			t.recoveryTable(w, runs)
			ackTable(w, runs, t.s.Repeats)
			fmt.Fprintln(w)
			t.costTable(w, runs)
			t.censusTable(w, runs)
			t.driftTable(w, runs)
		}
		t.referenceNotes(w, c.Index, runs)
		for _, r := range calib {
			fmt.Fprintln(w)
			fmt.Fprintln(w, calibrationHeadline(r))
			fmt.Fprintln(w, calibrationLine(r))
		}
		for _, r := range runs {
			if d, ok := r.LatencyNs["dispatch"]; ok {
				fmt.Fprintf(w, "harness in the %s run%s: dispatch (claim returned -> handler start) p50 %s p99 %s; bookkeeping per job p50 %s; "+
					"status/collector %s per second; client CPU %.1f µs/job%s; CPU run-queue wait %.1f ms/s\n",
					r.ID, realMark(r), fmtNs(d["p50"]), fmtNs(d["p99"]), fmtNs(r.LatencyNs["bookkeeping"]["p50"]), fmtNs(float64(r.Harness.CollectorTickMeanNs)),
					r.Harness.ClientCPUUsPerJob, fixedPart(r)+clientSplit(r), r.Harness.RunQueueWaitMsPerS)
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

func (t *terminal) latencyTable(w io.Writer, runs []summary.RunSummary) {
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
		if r.Config.Producers.Mode == "depth" {
			offered = fmt.Sprintf("depth %d", r.Config.Producers.Depth)
		}
		if r.Throughput.Offered > 0 {
			offered = fmtRate(r.Throughput.Offered)
		}
		l := r.Ledger
		rows = append(rows, []string{runName(r, t.s.Repeats), r.Status, t.claimKind(r), offered, fmtRate(r.Throughput.Completed),
			lat("e2e", "p50"), lat("e2e", "p99"), lat("e2e", "max"),
			analysis.FloorCell(r), lat("lateness", "p99"),
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
	for _, r := range runs {
		if r.Health.IsSuspect() {
			fmt.Fprintf(w, "health: %s %s\n", runName(r, t.s.Repeats), r.Health.Text())
		}
	}
	// An empty cell says why, under the table rather than in a column.
	for _, r := range runs {
		if _, ok := r.LatencyNs["e2e"]; !ok && r.Ledger.Completed > 0 {
			why := "no job completed in the measured window without a retry"
			if r.Prefill != nil && r.Prefill.Jobs > 0 {
				why = "only prefilled jobs ran: their wait is the backlog's, not an arrival's, so e2e is not measured"
			}
			fmt.Fprintf(w, "note: %s: e2e \"-\": %s\n", runName(r, t.s.Repeats), why)
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

// recoveryTable prints, for runs with faults, what the faults did.
func (t *terminal) recoveryTable(w io.Writer, runs []summary.RunSummary) {
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
		rows = append(rows, []string{runName(r, t.s.Repeats), r.Status, strconv.Itoa(rv.Landed), strconv.Itoa(rv.Skipped),
			strings.Join(kinds, ", "), strconv.Itoa(rv.Affected), strconv.Itoa(rv.NeverStarted), strconv.Itoa(rv.Restarted), lat("p50"), lat("p99"), lat("max"),
			strconv.Itoa(rv.Duplicates), strconv.FormatInt(r.Ledger.DuplicatedExecutions, 10), unstartedText(r), lost})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "faults: affected = jobs in flight at a fault, never run = of those, the handler had not started; recovery = fault -> the job's next handler start; "+
		"dup/fault = affected jobs whose handler had started and ran again; dup/run and lost from the ledger; "+
		"leased, never run (ledger, whole run): dead = dead-lettered on an attempt that never started, spent = attempts Recover took back unstarted, returned = hand-offs to a claimer that died registered, put back without an attempt")
	_ = report.Table(w, []string{"backend", "status", "faults", "skipped", "kinds", "affected", "never run", "restarted",
		"recovery p50", "recovery p99", "recovery max", "dup/fault", "dup/run", "leased, never run", "lost"}, rows)
	t.faultTable(w, runs)
}

// unstartedText is a run's jobs leased and never run, from its ledger:
// "dead D, spent S, returned R", with the dead letters no fault explains.
func unstartedText(r summary.RunSummary) string {
	l := r.Ledger
	s := fmt.Sprintf("dead %d, spent %d, returned %d", l.DeadUnstarted, l.RecoveredUnstarted, l.ReturnedUnstarted)
	if n := l.DeadUnstarted - l.DeadUnstartedExplained; n > 0 {
		s += fmt.Sprintf(" (%d dead not caught by a fault)", n)
	}
	return s
}

// maxFaultRows bounds the fault-by-fault table; a plan with more faults
// than that has them in faults.csv only.
const maxFaultRows = 40

// faultTable prints each fault that landed on its own row: when, what it
// hit, the jobs in flight at it, and what became of them.
func (t *terminal) faultTable(w io.Writer, runs []summary.RunSummary) {
	var rows [][]string
	for _, r := range runs {
		if r.Recovery == nil {
			continue
		}
		for _, f := range r.Recovery.Records {
			if f.Skipped != "" {
				continue
			}
			rows = append(rows, []string{runName(r, t.s.Repeats), strconv.Itoa(f.Index), string(f.Kind), f.Target,
				fmtAtPlanned(f.RunAtS, f.PlannedS), strconv.Itoa(f.Affected), strconv.Itoa(f.NeverStarted), strconv.Itoa(f.Restarted),
				strconv.Itoa(f.Duplicates), strconv.Itoa(f.DeadUnstarted), strconv.Itoa(f.RecoveredUnstarted), strconv.Itoa(f.Lost)})
		}
	}
	if len(rows) == 0 {
		return
	}
	defer promises(w, runs, t.s.Repeats)
	if len(rows) > maxFaultRows {
		fmt.Fprintf(w, "each fault on its own row: faults.csv (%d faults)\n", len(rows))
		return
	}
	fmt.Fprintln(w, "each fault (at: time into the run, warm-up included, as the scenario's faults[].at, in the run's time base; in flight: jobs the fault caught; never started: of those, the handler had not started; "+
		"restarted, duplicated, lost: what became of them; dead/spent unstarted: dead-lettered, or an attempt taken back by Recover, on an attempt that never started):")
	_ = report.Table(w, []string{"backend", "fault", "kind", "target", "at", "in flight", "never started", "restarted", "duplicated",
		"dead unstarted", "spent unstarted", "lost"}, rows)
}

// promises prints, for runs whose Redis restarted under a persistence
// mode, what the mode promises to keep beside what the ledger lost.
func promises(w io.Writer, runs []summary.RunSummary, repeats int) {
	for _, r := range runs {
		restarted := false
		for _, f := range r.Config.Faults {
			restarted = restarted || f.Descriptor().RestartsRedis
		}
		if !restarted {
			continue
		}
		mode := r.Config.Redis.Persistence
		fmt.Fprintf(w, "  %s: persistence %s promises, under a process SIGKILL: %s; the ledger lost %d acknowledged jobs\n",
			runName(r, repeats), mode, conditions.PersistencePromise(mode), r.Ledger.Lost)
		if sc := r.Snapshot; sc != nil {
			fmt.Fprintf(w, "    %s\n", snapshotText(*sc))
		}
	}
}

// snapshotText sets a restart's losses beside the jobs acknowledged after
// the last snapshot.
func snapshotText(sc summary.SnapshotCheck) string {
	verdict := "matches"
	if !sc.Matches {
		verdict = "does NOT match"
	}
	return fmt.Sprintf("last snapshot forked %.1fs before the kill: %d jobs acknowledged after it and open at the kill (+ up to %d enqueued within the fork window); lost %d %s",
		sc.SinceSnapshotS, sc.AckedAfter, sc.Window, sc.Lost, verdict)
}

// realMark labels the harness's own figures of a simulated run real.
func realMark(r summary.RunSummary) string {
	if r.TimeBase != nil {
		return " (real time)"
	}
	return ""
}

// fmtAt writes a moment of the run as the scenario writes one: 3m0s, 6.5s.
func fmtAt(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("%.1fs", s)
}

// fmtAtPlanned is fmtAt of when a fault landed, with when it was planned
// when that differs by 0.1 s or more (a crash point waits for a worker to
// reach it).
func fmtAtPlanned(at, planned float64) string {
	if math.Abs(at-planned) < 0.1 {
		return fmtAt(at)
	}
	return fmtAt(at) + " (planned " + fmtAt(planned) + ")"
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

// clientSplit says how much of a run's client CPU a job the harness
// takes (its cell's null calibration at the same load) and how much the
// store's client side.
func clientSplit(r summary.RunSummary) string {
	h := r.Harness
	if h.ClientHarnessUsPerJob <= 0 {
		return ""
	}
	return fmt.Sprintf(" (store calls %.1f, harness %.1f: the null calibration's at the same load)", h.ClientStoreUsPerJob, h.ClientHarnessUsPerJob)
}

// printScaling writes the curve with its projection.
func printScaling(w io.Writer, pts []summary.ScalingPoint) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nscaling over Redis Cluster masters (medians over repeats; efficiency = jobs/s over linear scaling from the smallest cluster):")
	header := []string{"backend", "masters", "shards", "jobs/s", "efficiency", "redis cpu/job", "busiest master cpu/job",
		"client cpu/job", "bound by", "projected jobs/s (a core per master)", "proj. efficiency", "client cores for it", "this machine's ceiling", "lost"}
	var rows [][]string
	for _, p := range pts {
		rows = append(rows, []string{p.Backend, strconv.Itoa(p.Masters), strconv.Itoa(p.Shards), fmt.Sprintf("%.0f", p.Throughput),
			fmt.Sprintf("%.2f", p.Efficiency), fmt.Sprintf("%.1fµs", p.RedisCPUMicros), fmt.Sprintf("%.1fµs", p.BusiestMicros),
			fmt.Sprintf("%.1fµs", p.ClientMicros), p.Bound, fmt.Sprintf("%.0f", p.ProjectedRedis),
			fmt.Sprintf("%.2f", p.ProjectedEfficiency), fmt.Sprintf("%.1f", p.ClientCores), fmt.Sprintf("%.0f", p.ProjectedHere),
			fmt.Sprintf("%.0f", p.Lost)})
	}
	_ = report.Table(w, header, rows)
	fmt.Fprintf(w, "projection: a model, not a measurement. Each master runs commands on one thread, so the busiest master's CPU per job bounds the cluster at "+
		"1e6 / that µs jobs/s with a core per master; clients on hosts of their own need (client cpu/job x that rate) cores. "+
		"This machine's ceiling is its %d CPUs over Redis + client CPU per job: masters beyond the cores share them with the clients.\n", pts[0].CPUs)
}

// printSLO writes the maximum sustainable rate per backend.
func printSLO(w io.Writer, rs []summary.SLOResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nmaximum sustainable rate (highest offered rate with median e2e p99 <= %s and completions >= %.0f%% of offered):\n",
		fmtNs(float64(rs[0].BoundNs)), analysis.KeepPace*100)
	for _, r := range rs {
		tested := fmt.Sprintf("%g..%g jobs/s tested", r.Tested[0], r.Tested[len(r.Tested)-1])
		switch {
		case r.MaxRate == 0:
			fmt.Fprintf(w, "  %-10s none of %s (%s)\n", r.Backend, tested, r.Why)
		case r.FirstMiss == 0:
			fmt.Fprintf(w, "  %-10s at least %g jobs/s: every rate of %s held\n", r.Backend, r.MaxRate, tested)
		default:
			fmt.Fprintf(w, "  %-10s %g jobs/s (%s; first miss %s)\n", r.Backend, r.MaxRate, tested, r.Why)
		}
	}
}

// printThresholds writes one line per threshold under the tables.
// printSuspectGate says when the thresholds were decided on suspect runs.
func printSuspectGate(w io.Writer, sum *summary.Summary) {
	n := 0
	for _, r := range sum.Runs {
		if !r.Calibration && r.Health.IsSuspect() {
			n++
		}
	}
	if n > 0 && len(sum.Thresholds) > 0 {
		fmt.Fprintf(w, "  (decided on %d suspect run(s): the machine may have set their numbers; aebench run --strict-health exits 5 instead)\n", n)
	}
}

func printThresholds(w io.Writer, results []summary.ThresholdResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintln(w, "\nthresholds (scenario; medians over the repeats of every job store):")
	for _, r := range results {
		switch r.Status {
		case "passed":
			fmt.Fprintf(w, "  passed    %s\n", r.Threshold)
		case "baseline":
			fmt.Fprintf(w, "  baseline  %s (relative: aebench compare BASE NEW checks it against a baseline)\n", r.Threshold)
		default:
			for _, c := range r.Crossings {
				fmt.Fprintf(w, "  %-9s %s\n", r.Status, c)
			}
		}
	}
}
