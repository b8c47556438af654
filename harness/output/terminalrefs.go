package output

import (
	"fmt"
	"io"
	"strings"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// ackTable prints, when a run batched its acks (workers.ack_batch > 1),
// what the batching added to e2e: the ack wait (handler end -> Complete
// acknowledged) next to the Complete call and e2e, and jobs per call.
func ackTable(w io.Writer, runs []summary.RunSummary, repeats int) {
	batched := false
	for _, r := range runs {
		batched = batched || r.Config.Workers.AckBatch > 1
	}
	if !batched {
		return
	}
	var rows [][]string
	for _, r := range runs {
		lat := func(tag, q string) string {
			if m, ok := r.LatencyNs[tag]; ok {
				return fmtNs(m[q])
			}
			return "-"
		}
		perCall := "-"
		if c := r.Counters; c.CompleteCalls > 0 {
			perCall = fmt.Sprintf("%.1f", float64(c.Completed)/float64(c.CompleteCalls))
		}
		wc := r.Config.Workers
		rows = append(rows, []string{runName(r, repeats), fmt.Sprint(wc.AckBatch), wc.AckInterval.String(), perCall,
			lat("ack_wait", "p50"), lat("ack_wait", "p99"), lat("complete", "p50"), lat("complete", "p99"),
			lat("e2e", "p50"), lat("e2e", "p99")})
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "acks: ack wait = handler end -> its Complete acknowledged (batch fill + the call): what ack batching adds to e2e; complete = one call (a whole batch when ack batch > 1)")
	_ = report.Table(w, []string{"backend", "ack batch", "interval", "jobs/call", "ack wait p50", "ack wait p99",
		"complete p50", "complete p99", "e2e p50", "e2e p99"}, rows)
}

// ledgerNotes prints, under the latency table, what the lost column does
// not say: the store's state of each lost job (read back before it was
// called lost), the jobs the drain cut off, and the outcomes taken from a
// read-back because their events never came.
func ledgerNotes(w io.Writer, runs []summary.RunSummary, repeats int) {
	for _, r := range runs {
		l := r.Ledger
		if l.Lost > 0 {
			fmt.Fprintf(w, "note: %s: lost %d, the store shows them %s\n", runName(r, repeats), l.Lost, ledger.FormatStates(l.LostStates))
		}
		if l.UnfinishedAtDrain > 0 {
			hint := "raise drain"
			if wc := r.Config.Workers; wc.Lease+wc.RecoveryInterval > r.Config.Drain {
				// An expired lease is taken back only after lease +
				// recovery_interval: a longer drain alone may not do.
				hint = fmt.Sprintf("raise drain, above lease %s + recovery_interval %s, so that a job a crashed worker held can come back within it",
					wc.Lease, wc.RecoveryInterval)
			}
			fmt.Fprintf(w, "note: %s: %d job(s) unfinished at drain (still queued or running where the store will reach them when the drain of %s ended; not lost: %s); read back: %d open job(s) in %.1fs\n",
				runName(r, repeats), l.UnfinishedAtDrain, r.Config.Drain, hint, l.ReadBackJobs, l.ReadBackMS/1000)
			if l.UnfinishedLater != "" {
				fmt.Fprintf(w, "note: %s: some of them the system takes back itself, later than the run waits: %s\n", runName(r, repeats), l.UnfinishedLater)
			}
		}
		if r.StallNote != "" {
			fmt.Fprintf(w, "note: %s: %s\n", runName(r, repeats), r.StallNote)
		}
		if r.Served {
			fmt.Fprintf(w, "note: %s: %s\n", runName(r, repeats), summary.ServedNote)
		}
		if r.AuditError != "" {
			fmt.Fprintf(w, "note: %s: the store's audit failed: %s\n", runName(r, repeats), r.AuditError)
		}
		if n := r.Counters.Redelivered; n > 0 {
			fmt.Fprintf(w, "note: %s: %d start(s) the system itself flagged as redeliveries, beside the ledger's %d duplicate start(s) (%d duplicated executions: starts and completions)\n",
				runName(r, repeats), n, l.DuplicateStarts, l.DuplicatedExecutions)
		}
		if l.Unconfirmed > 0 {
			fmt.Fprintf(w, "note: %s: %d started job(s) unconfirmed (e.g. %v): the read-back no longer found them, and the store declares %s; not counted lost or completed\n",
				runName(r, repeats), l.Unconfirmed, l.UnconfirmedIDs, l.UnconfirmedWhy)
		}
		if l.SettledByReadBack > 0 {
			fmt.Fprintf(w, "note: %s: %d outcome(s) settled by reading the record back (events cut off by a kill, a lost reply or the drain)\n",
				runName(r, repeats), l.SettledByReadBack)
		}
	}
}

func fmtRatio(x float64) string {
	if x <= 0 {
		return "-"
	}
	if x < 10 {
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// referenceNotes prints, after a cell's tables, every backend side by
// side: its headline figures and its ratios to the cell's references
// (column "x floor", "x best strategy"); then what the references and
// peers do not guarantee, and the runs that were not applicable.
func (t *terminal) referenceNotes(w io.Writer, cell int, runs []summary.RunSummary) {
	refs := analysis.References(t.sum.Runs, cell)
	if len(runs) > 1 {
		t.sideBySide(w, refs, runs)
		t.queueWaits(w, refs, runs)
	}
	seen := map[string]bool{}
	for _, r := range t.sum.Runs {
		if r.Cell != cell {
			continue
		}
		if r.Status == summary.StatusNotApplicable {
			fmt.Fprintf(w, "%s: not applicable: %s\n", runName(r, t.s.Repeats), r.NotApplicable)
		}
		if r.Limits != "" && !seen[r.Label] && !r.Calibration {
			seen[r.Label] = true
			fmt.Fprintf(w, "%s (%s%s%s) does not guarantee: %s\n", r.Label, r.Kind, notJobStore(r.Kind), t.settings(r), r.Limits)
		}
	}
}

// sideBySide is the cell's one table of every backend: jobs/s, e2e p50
// and p99, lateness p99, Redis CPU and commands per job, the ledger's lost
// and duplicated, and the ratios to the references.
func (t *terminal) sideBySide(w io.Writer, refs []analysis.RefFigures, runs []summary.RunSummary) {
	header := []string{"backend", "kind", "done/s", "e2e p50", "e2e p99", "late p99", "redis µs/job", "cmds/job", "lost", "dup"}
	var names []string
	for _, f := range refs {
		// Short heads keep the table within 120 columns: "x best" is the
		// ratio to the best strategy, "cpu x best" its Redis CPU per job.
		short := strings.TrimSuffix(f.Key, " strategy")
		header = append(header, "x "+short, "cpu x "+short)
		names = append(names, fmt.Sprintf("%s = %s", f.Key, f.Label))
	}
	var rows [][]string
	for _, r := range runs {
		lat := func(tag, q string) string {
			if m, ok := r.LatencyNs[tag]; ok {
				return latText(&r, m[q])
			}
			return "-"
		}
		cpu, cmds := "-", "-"
		if c := r.Cost; c != nil && c.Commands > 0 {
			cpu, cmds = fmt.Sprintf("%.1f", c.RedisCPUMicros), fmt.Sprintf("%.2f", c.Commands)
		}
		kind := r.Kind
		if r.PeerMode != "" {
			kind += " " + r.PeerMode
		}
		row := []string{runName(r, t.s.Repeats), kind, fmtRate(r.Throughput.Completed), lat("e2e", "p50"), lat("e2e", "p99"),
			lat("lateness", "p99"), cpu, cmds, fmt.Sprint(r.Ledger.Lost), fmt.Sprint(r.Ledger.DuplicatedExecutions)}
		for _, f := range refs {
			x := r.Ratios[f.Key]
			row = append(row, fmtRatio(x.Throughput), fmtRatio(x.RedisCPUPerJob))
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w)
	note := ""
	if len(names) > 0 {
		note = "; " + strings.Join(names, ", ") + "; x: done/s counted up to the offered rate, above 1 is faster; cpu x: Redis CPU per job, above 1 costs more"
	}
	fmt.Fprintf(w, "side by side (same Redis, same load, one ledger%s):\n", note)
	_ = report.Table(w, header, rows)
}

// queueWaits prints, when the cell has a floor, each job store's
// queue-wait p50 and p99 over the floor's (its mean over its repeats),
// run by run and as the median over the store's repeats (the upper one
// of an even count, as every median of this output): how much a
// store's wait for work adds to the least a job waits (issue 24's target
// for blocking strategies at a low rate: at most 1.3x).
func (t *terminal) queueWaits(w io.Writer, refs []analysis.RefFigures, runs []summary.RunSummary) {
	var floor *analysis.RefFigures
	for i := range refs {
		if refs[i].Key == analysis.RefFloor {
			floor = &refs[i]
		}
	}
	if floor == nil {
		return
	}
	type figs struct{ p50, p99 []float64 }
	byLabel := map[string]*figs{}
	var order []string
	for _, r := range runs {
		x := r.Ratios[analysis.RefFloor]
		if r.Kind != string(registry.KindJobStore) || x.QueueWaitP50 == 0 {
			continue
		}
		f, ok := byLabel[r.Label]
		if !ok {
			f = &figs{}
			byLabel[r.Label] = f
			order = append(order, r.Label)
		}
		f.p50, f.p99 = append(f.p50, x.QueueWaitP50), append(f.p99, x.QueueWaitP99)
	}
	if len(order) == 0 {
		return
	}
	var rows [][]string
	for _, l := range order {
		f := byLabel[l]
		rows = append(rows, []string{l, fmtRatio(median(f.p50)), fmtRatio(median(f.p99)), ratioList(f.p50), ratioList(f.p99)})
	}
	fmt.Fprintf(w, "\nqueue wait over the floor's (handler start minus when the job became due, histogram queue_wait;"+
		" the floor's mean over its %d repeat(s); above 1 waits longer):\n", floor.Repeats)
	_ = report.Table(w, []string{"backend", "p50 x floor", "p99 x floor", "p50 by repeat", "p99 by repeat"}, rows)
}

// ratioList is xs as fmtRatio texts, space-separated.
func ratioList(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmtRatio(x)
	}
	return strings.Join(out, " ")
}

// notJobStore marks a reference in its limits line: it never enters the
// claims made about job stores.
func notJobStore(kind string) string {
	if kind == string(registry.KindReference) {
		return ", not a job store"
	}
	return ""
}

// settings lists a reference's backend options as the run used them
// (asynq's intervals dominate its latency, so they go with its numbers).
func (t *terminal) settings(r summary.RunSummary) string {
	be, err := t.reg.Lookup(r.Backend)
	if err != nil || len(be.Options) == 0 {
		return ""
	}
	var parts []string
	for _, o := range be.Options {
		v, ok := r.Config.Backend.Options[o.Name]
		if !ok {
			v = o.Default
		}
		parts = append(parts, o.Name+" "+v)
	}
	return "; " + strings.Join(parts, ", ")
}
