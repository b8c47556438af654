package harness

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/report"
)

// SchemaVersion is summary.json's schema version; bump it on any change a
// reader of older files would misread.
const SchemaVersion = 1

// Run statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"      // lost, unexpected or early jobs
	StatusInterrupted = "interrupted" // Ctrl-C: numbers so far, no verdict
	StatusError       = "error"       // infrastructure or configuration
)

// Summary is summary.json.
type Summary struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          string       `json:"tool"`
	Scenario      ScenarioInfo `json:"scenario"`
	Environment   Environment  `json:"environment"`
	StartedAt     time.Time    `json:"started_at"`
	FinishedAt    time.Time    `json:"finished_at,omitzero"`
	// Complete: every planned run ran. False while running, after Ctrl-C
	// or after an infrastructure error.
	Complete    bool              `json:"complete"`
	Interrupted bool              `json:"interrupted"`
	Units       map[string]string `json:"units"`
	Runs        []RunSummary      `json:"runs"`
	// HarnessOverhead is what the harness itself adds, from the calibration
	// runs and the dispatch/bookkeeping histograms of every run.
	HarnessOverhead *Overhead `json:"harness_overhead,omitempty"`
	PlotError       string    `json:"plot_error,omitempty"`
}

// ScenarioInfo is the scenario as given.
type ScenarioInfo struct {
	Name          string     `json:"name"`
	File          string     `json:"file"`
	Description   string     `json:"description,omitempty"`
	Overrides     []string   `json:"overrides,omitempty"`
	Repeats       int        `json:"repeats"`
	CalibrationNs int64      `json:"calibration_ns"`
	Cells         []CellInfo `json:"cells"`
	Source        string     `json:"source"`
}

// CellInfo names a matrix cell.
type CellInfo struct {
	Index int      `json:"index"`
	Vary  []string `json:"vary"`
}

// RunSummary is one run in summary.json.
type RunSummary struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Backend     string `json:"backend"`
	Cell        int    `json:"cell"`
	Repeat      int    `json:"repeat"`
	Calibration bool   `json:"calibration"`
	// Status is ok, failed (lost, unexpected or early jobs), interrupted or error.
	Status   string   `json:"status"`
	Error    string   `json:"error,omitempty"`
	Problems []string `json:"problems,omitempty"`
	// Conditions is the one-line statement printed with every number.
	Conditions   string     `json:"conditions"`
	Config       Config     `json:"config"`
	Redis        *RedisInfo `json:"redis,omitempty"`
	Client       string     `json:"client"`
	Capabilities []string   `json:"capabilities"`
	// MoverLoop: the harness ran a Promote loop (workers.mover_interval).
	MoverLoop  bool       `json:"mover_loop"`
	StartedAt  time.Time  `json:"started_at"`
	Window     Window     `json:"window"`
	Throughput Throughput `json:"throughput"`
	// PeakBacklog is the most jobs waiting (acknowledged, not finished, not
	// in a handler) at any once-a-second sample.
	PeakBacklog int64 `json:"peak_backlog"`
	// LatencyNs maps a histogram name to p50, p90, p99, p99.9, p99.99, max,
	// mean and count, in ns.
	LatencyNs map[string]map[string]float64 `json:"latency_ns"`
	Ledger    LedgerReport                  `json:"ledger"`
	Counters  Counters                      `json:"counters"`
	Cost      *CostReport                   `json:"cost"`
	Harness   HarnessCost                   `json:"harness"`
	Files     RunFiles                      `json:"files"`
	// Recovery is what the run's faults did (absent without faults): per
	// fault the jobs in flight, how long until each started again, the
	// duplicates and losses they caused.
	Recovery *faults.Summary `json:"recovery,omitempty"`
}

// RunFiles names a run's files, relative to the results folder.
type RunFiles struct {
	HLog string            `json:"hlog"`
	HGRM map[string]string `json:"hgrm"`
}

// Overhead reports the harness's own cost.
type Overhead struct {
	Method      string            `json:"method"`
	Calibration []CalibrationInfo `json:"calibration"`
}

// CalibrationInfo is one null-backend run: its end-to-end latency minus the
// handler's run time is what the harness adds per job.
type CalibrationInfo struct {
	RunID        string  `json:"run_id"`
	Cell         int     `json:"cell"`
	E2EP50Ns     float64 `json:"e2e_p50_ns"`
	E2EP99Ns     float64 `json:"e2e_p99_ns"`
	HandlerP50Ns float64 `json:"handler_p50_ns"`
	HandlerP99Ns float64 `json:"handler_p99_ns"`
	// OverheadP50Ns and OverheadP99Ns are percentiles of e2e minus the
	// handler's run time, job by job: what the harness adds per job.
	OverheadP50Ns    float64 `json:"overhead_p50_ns"`
	OverheadP99Ns    float64 `json:"overhead_p99_ns"`
	DispatchP50Ns    float64 `json:"dispatch_p50_ns"`
	DispatchP99Ns    float64 `json:"dispatch_p99_ns"`
	BookkeepingP50Ns float64 `json:"bookkeeping_p50_ns"`
	BookkeepingP99Ns float64 `json:"bookkeeping_p99_ns"`
	CollectorTickNs  int64   `json:"collector_tick_mean_ns"`
	CompletedPerS    float64 `json:"completed_per_s"`
}

func newSummary(s *Scenario, env Environment, started time.Time) *Summary {
	sum := &Summary{SchemaVersion: SchemaVersion, Tool: "aebench", Environment: env, StartedAt: started.UTC(),
		Units: map[string]string{
			"latency_ns":       "nanoseconds",
			"throughput":       "jobs per second over the measured window (after warm-up, before the drain)",
			"cost.per_job":     "Redis INFO deltas over the measured window divided by cost.jobs (jobs completed in the window)",
			"cost.memory":      "bytes, INFO used_memory",
			"timeseries.csv":   "per-second counts; backlog = acknowledged jobs not finished and not in a handler",
			"hlog":             "HdrHistogram interval log, values in ns, one tag per histogram",
			"hgrm":             "percentile distribution, values in ms",
			"recovery":         "fault -> next handler start of each job in flight at the fault (faults.csv: one row per fault, at_s from the start of the measured window)",
			"e2e":              "intended enqueue time (open loop: the plan) to Complete acknowledged, immediate jobs done on their first attempt",
			"lateness":         "handler start minus the RunAt asked for (delayed jobs, and retries after Fail)",
			"queue_wait":       "handler start minus when the attempt became due",
			"enqueue, claim..": "one store call each; claim counts calls that returned jobs, including any wait for work",
		},
		Scenario: ScenarioInfo{Name: s.Name, File: s.File, Description: s.Description, Overrides: s.Overrides,
			Repeats: s.Repeats, CalibrationNs: int64(s.Calibration), Source: string(s.Source)}}
	for _, c := range s.Cells {
		sum.Scenario.Cells = append(sum.Scenario.Cells, CellInfo{Index: c.Index, Vary: c.Vary})
	}
	return sum
}

func (e *Environment) addRedis(r RedisInfo) {
	if !slices.Contains(e.Redis, r) {
		e.Redis = append(e.Redis, r)
	}
}

func (e *Environment) addClient(c string) {
	if !slices.Contains(e.Clients, c) {
		e.Clients = append(e.Clients, c)
	}
}

// fill copies what the engine measured into the run's summary and decides
// its status.
func (pr *planRunner) fill(rs *RunSummary, res *runResult) {
	rs.StartedAt = res.startedAt.UTC()
	rs.Window, rs.Throughput, rs.PeakBacklog = res.window, res.throughput, res.peakBacklog
	rs.Ledger, rs.Counters, rs.Cost, rs.Harness = res.ledger, res.counters, res.cost, res.harness
	rs.LatencyNs = map[string]map[string]float64{}
	for t, h := range res.hists {
		if h != nil && h.TotalCount() > 0 {
			rs.LatencyNs[Tag(t).String()] = report.Percentiles(h)
		}
	}
	rs.Recovery = res.recovery
	rs.Problems = res.ledger.Problems
	if c := res.counters; res.firstErr != nil {
		rs.Problems = append(rs.Problems, fmt.Sprintf("store errors: %d enqueue, %d claim, %d complete, %d fail, %d extend, %d recover, %d promote; first: %v",
			c.EnqueueErrors, c.ClaimErrors, c.CompleteErrors, c.FailErrors, c.ExtendErrors, c.RecoverErrors, c.PromoteErrors, res.firstErr))
	}
	if !res.window.Drained {
		rs.Problems = append(rs.Problems, fmt.Sprintf("drain did not finish within %s", rs.Config.Drain))
	}
	switch {
	case res.err != nil:
		rs.Status, rs.Error = StatusError, res.err.Error()
	case res.interrupted:
		rs.Status = StatusInterrupted
	case !res.ledger.OK:
		rs.Status = StatusFailed
	default:
		rs.Status = StatusOK
	}
}

// writeRunFiles writes one .hgrm per non-empty histogram and the run's rows
// of timeseries.csv.
func (pr *planRunner) writeRunFiles(rs *RunSummary, res *runResult) error {
	rs.Files.HGRM = map[string]string{}
	for t, h := range res.hists {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		name := rs.ID + "." + Tag(t).String() + ".hgrm"
		if err := writeFileWith(filepath.Join(pr.dir, name), func(w io.Writer) error {
			return report.WriteHGRM(w, h, 1e6)
		}); err != nil {
			return err
		}
		rs.Files.HGRM[Tag(t).String()] = name
	}
	if err := pr.series.write(rs, res.series); err != nil {
		return err
	}
	return pr.writeFaults(rs)
}

// writeFaults appends the run's faults to faults.csv (created with the
// first run that has any): one row per fault, time on the plots' axis.
func (pr *planRunner) writeFaults(rs *RunSummary) error {
	if rs.Recovery == nil {
		return nil
	}
	path := filepath.Join(pr.dir, "faults.csv")
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if statErr != nil {
		_ = w.Write([]string{"run", "backend", "label", "cell", "index", "kind", "point", "target", "at_s",
			"affected", "restarted", "duplicates", "lost", "recovery_max_ms", "skipped"})
	}
	for _, r := range rs.Recovery.Records {
		_ = w.Write([]string{rs.ID, rs.Backend, rs.Label, strconv.Itoa(rs.Cell), strconv.Itoa(r.Index), string(r.Kind),
			string(r.Point), r.Target, strconv.FormatFloat(r.AtS, 'f', 3, 64), strconv.Itoa(r.Affected),
			strconv.Itoa(r.Restarted), strconv.Itoa(r.Duplicates), strconv.Itoa(r.Lost),
			strconv.FormatFloat(float64(r.RecoveryMaxNs)/1e6, 'f', 1, 64), r.Skipped})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeFileWith(path string, fn func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := fn(bw); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSummary replaces summary.json atomically, so a reader (or a crash)
// never sees half a file.
func (pr *planRunner) writeSummary() error {
	data, err := json.MarshalIndent(pr.sum, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	tmp := filepath.Join(pr.dir, ".summary.json.tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(pr.dir, "summary.json"))
}

// seriesWriter appends every run's time series to timeseries.csv.
type seriesWriter struct {
	f *os.File
	w *csv.Writer
}

func newSeriesWriter(path string) (*seriesWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	sw := &seriesWriter{f: f, w: csv.NewWriter(f)}
	err = sw.w.Write([]string{"run", "backend", "label", "cell", "second", "phase", "enqueued", "completed",
		"backlog", "in_flight", "started", "retried", "dead", "e2e_p50_ms", "e2e_p99_ms"})
	sw.w.Flush()
	if err == nil {
		err = sw.w.Error()
	}
	return sw, err
}

func (sw *seriesWriter) write(rs *RunSummary, pts []SeriesPoint) error {
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, p := range pts {
		if err := sw.w.Write([]string{rs.ID, rs.Backend, rs.Label, strconv.Itoa(rs.Cell), strconv.Itoa(p.Second), p.Phase,
			i64(p.Enqueued), i64(p.Completed), i64(p.Backlog), i64(p.InFlight), i64(p.Started), i64(p.Retried), i64(p.Dead),
			f(p.E2EP50Ms), f(p.E2EP99Ms)}); err != nil {
			return err
		}
	}
	sw.w.Flush()
	return sw.w.Error()
}

func (sw *seriesWriter) close() error { return sw.f.Close() }

// statusPrinter prints the once-a-second status line: redrawn in place on a
// terminal, one plain line each otherwise (CI logs).
type statusPrinter struct {
	w     io.Writer
	tty   bool
	drawn bool
}

func (sp *statusPrinter) line(s StatusLine) {
	p99 := "-"
	if s.E2EP99 > 0 {
		p99 = fmtNs(float64(s.E2EP99))
	}
	txt := fmt.Sprintf("  [%s] %3.0fs %-7s enq %6.0f/s  done %6.0f/s  backlog %6d  in flight %4d  e2e p99 so far %s",
		s.RunID, s.Elapsed.Seconds(), s.Phase, s.EnqPerSec, s.DonePerSec, s.Backlog, s.InFlight, p99)
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

func verdictLine(rs *RunSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  => %s: %s", rs.ID, strings.ToUpper(rs.Status))
	if rs.Error != "" {
		fmt.Fprintf(&b, " (%s)", rs.Error)
	}
	if e2e, ok := rs.LatencyNs["e2e"]; ok {
		fmt.Fprintf(&b, "; %.0f jobs/s, e2e p50 %s p99 %s", rs.Throughput.Completed, fmtNs(e2e["p50"]), fmtNs(e2e["p99"]))
	}
	l := rs.Ledger
	if rs.Status == StatusError && l.Attempted == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "; %d acknowledged, %d completed, %d dead-lettered, lost %d%s, unexpected %d, duplicated %d, early %d",
		l.Acknowledged, l.Completed, l.DeadLettered, l.Lost, lostNote(rs), l.Unexpected, l.DuplicatedExecutions, l.StartedEarly)
	if rv := rs.Recovery; rv != nil {
		fmt.Fprintf(&b, "\n     faults: %d landed, %d skipped; %d jobs in flight at them, %d started again (recovery p50 %s p99 %s max %s), %d duplicates, %d lost",
			rv.Landed, rv.Skipped, rv.Affected, rv.Restarted, fmtNs(rv.RecoveryNs["p50"]), fmtNs(rv.RecoveryNs["p99"]), fmtNs(rv.RecoveryNs["max"]), rv.Duplicates, rv.Lost)
	}
	for _, p := range rs.Problems {
		b.WriteString("\n     problem: " + p)
	}
	return b.String()
}

// lostNote says why lost jobs did not fail the run.
func lostNote(rs *RunSummary) string {
	if !rs.Ledger.LostExpected {
		return ""
	}
	if rs.Config.Redis.Persistence == "none" {
		return " (expected without persistence)"
	}
	return fmt.Sprintf(" (expected: expect.lost %s with persistence %s)", rs.Config.Expect.Lost, rs.Config.Redis.Persistence)
}

// fmtNs formats nanoseconds for people: 850µs, 1.24ms, 12.3ms, 125ms, 2.5s.
func fmtNs(ns float64) string {
	switch {
	case ns <= 0:
		return "0"
	case ns < 1e6:
		return fmt.Sprintf("%.0fµs", ns/1e3)
	case ns < 1e7:
		return fmt.Sprintf("%.2fms", ns/1e6)
	case ns < 1e8:
		return fmt.Sprintf("%.1fms", ns/1e6)
	case ns < 1e10:
		return fmt.Sprintf("%.0fms", ns/1e6)
	}
	return fmt.Sprintf("%.1fs", ns/1e9)
}

func overheadSummary(sum *Summary) *Overhead {
	o := &Overhead{Method: "a null-backend calibration run per matrix cell (in-process queue with blocking claim, " +
		"same load): its e2e minus each job's handler time (histogram e2e_minus_handler) is what the harness adds per job; every run also records " +
		"dispatch (Claim returned -> handler started) and bookkeeping (ledger and histogram work per job)"}
	for _, r := range sum.Runs {
		if !r.Calibration {
			continue
		}
		lat := func(tag, q string) float64 { return r.LatencyNs[tag][q] }
		o.Calibration = append(o.Calibration, CalibrationInfo{RunID: r.ID, Cell: r.Cell,
			E2EP50Ns: lat("e2e", "p50"), E2EP99Ns: lat("e2e", "p99"),
			HandlerP50Ns: lat("handler", "p50"), HandlerP99Ns: lat("handler", "p99"),
			OverheadP50Ns: lat("e2e_minus_handler", "p50"), OverheadP99Ns: lat("e2e_minus_handler", "p99"),
			DispatchP50Ns: lat("dispatch", "p50"), DispatchP99Ns: lat("dispatch", "p99"),
			BookkeepingP50Ns: lat("bookkeeping", "p50"), BookkeepingP99Ns: lat("bookkeeping", "p99"),
			CollectorTickNs: r.Harness.CollectorTickMeanNs, CompletedPerS: r.Throughput.Completed})
	}
	return o
}
