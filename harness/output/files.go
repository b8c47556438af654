package output

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// base is the no-op part of an Output, for formats that use only some calls.
type base struct{ dir string }

func (b *base) Start(p Plan) error                              { b.dir = p.Dir; return nil }
func (*base) Sample(Run, engine.SeriesPoint)                    {}
func (*base) RunDone(*summary.RunSummary, *engine.Result) error { return nil }
func (*base) PlanDone(*summary.Summary) error                   { return nil }
func (*base) Close() error                                      { return nil }

// timeseries appends every run's time series to timeseries.csv as the run
// ends.
type timeseries struct {
	base
	f *os.File
	w *csv.Writer
}

func newTimeseries(string) (Output, error) { return &timeseries{}, nil }

func (t *timeseries) Start(p Plan) error {
	f, err := os.Create(filepath.Join(p.Dir, "timeseries.csv"))
	if err != nil {
		return err
	}
	t.f, t.w = f, csv.NewWriter(f)
	err = t.w.Write([]string{"run", "backend", "label", "cell", "second", "phase", "enqueued", "completed",
		"backlog", "backlog_due", "backlog_delayed", "in_flight", "started", "retried", "dead", "e2e_samples", "e2e_p50_ms", "e2e_p99_ms", "span_s", "run_queue_wait_ms_per_s", "harness_cpu_percent", "queue_wait_p99_ms", "redis_cpu_percent", "redis_commands", "sent", "redis_used_bytes", "redis_rss_bytes", "redis_evicted"})
	t.w.Flush()
	if err == nil {
		err = t.w.Error()
	}
	return err
}

func (t *timeseries) RunDone(rs *summary.RunSummary, res *engine.Result) error {
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, p := range res.Series {
		// A second without an e2e sample has no percentile: an empty cell,
		// never a 0 a plot or a spreadsheet would read as "instant".
		p50, p99 := "", ""
		if p.E2ESamples > 0 {
			p50, p99 = f(p.E2EP50Ms), f(p.E2EP99Ms)
		}
		if err := t.w.Write([]string{rs.ID, rs.Backend, rs.Label, strconv.Itoa(rs.Cell), strconv.Itoa(p.Second), p.Phase,
			i64(p.Enqueued), i64(p.Completed), i64(p.Backlog), i64(p.BacklogDue), i64(p.BacklogDelayed), i64(p.InFlight), i64(p.Started), i64(p.Retried), i64(p.Dead),
			i64(p.E2ESamples), p50, p99, f(rs.Config.Speed()), f(p.RunQueueWaitMsPerS), f(p.HarnessCPUPercent), f(p.QueueWaitP99Ms), f(p.RedisCPUPercent), i64(p.RedisCommands), i64(p.Sent),
			i64(p.RedisUsedBytes), i64(p.RedisRSSBytes), i64(p.RedisEvicted)}); err != nil {
			return err
		}
	}
	t.w.Flush()
	return t.w.Error()
}

func (t *timeseries) Close() error {
	if t.f == nil {
		return nil
	}
	return t.f.Close()
}

// faultsCSV appends each run's faults to faults.csv (created with the
// first run that has any): one row per fault, time on the plots' axis.
type faultsCSV struct{ base }

func newFaultsCSV(string) (Output, error) { return &faultsCSV{}, nil }

func (fc *faultsCSV) RunDone(rs *summary.RunSummary, _ *engine.Result) error {
	if rs.Recovery == nil {
		return nil
	}
	path := filepath.Join(fc.dir, "faults.csv")
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if statErr != nil {
		_ = w.Write([]string{"run", "backend", "label", "cell", "index", "kind", "point", "target", "at_s",
			"affected", "never_started", "restarted", "duplicates", "dead_unstarted", "recovered_unstarted", "lost", "recovery_max_ms", "skipped", "run_at_s", "planned_s"})
	}
	for _, r := range rs.Recovery.Records {
		_ = w.Write([]string{rs.ID, rs.Backend, rs.Label, strconv.Itoa(rs.Cell), strconv.Itoa(r.Index), string(r.Kind),
			string(r.Point), r.Target, strconv.FormatFloat(r.AtS, 'f', 3, 64), strconv.Itoa(r.Affected), strconv.Itoa(r.NeverStarted),
			strconv.Itoa(r.Restarted), strconv.Itoa(r.Duplicates), strconv.Itoa(r.DeadUnstarted), strconv.Itoa(r.RecoveredUnstarted), strconv.Itoa(r.Lost),
			strconv.FormatFloat(float64(r.RecoveryMaxNs)/1e6, 'f', 1, 64), r.Skipped, strconv.FormatFloat(r.RunAtS, 'f', 3, 64), strconv.FormatFloat(r.PlannedS, 'f', 3, 64)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hgrm writes one .hgrm per non-empty histogram of a run and names them in
// the run's summary (Files.HGRM).
type hgrm struct{ base }

func newHGRM(string) (Output, error) { return &hgrm{}, nil }

func (h *hgrm) RunDone(rs *summary.RunSummary, res *engine.Result) error {
	rs.Files.HGRM = map[string]string{}
	for t, hg := range res.Hists {
		if hg == nil || hg.TotalCount() == 0 {
			continue
		}
		name := rs.ID + "." + hist.Tag(t).String() + ".hgrm"
		if err := writeFileWith(filepath.Join(h.dir, name), func(w io.Writer) error {
			return report.WriteHGRM(w, hg, 1e6)
		}); err != nil {
			return err
		}
		rs.Files.HGRM[hist.Tag(t).String()] = name
	}
	return nil
}

// writeFileWith creates path and writes it through a buffer with fn.
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
