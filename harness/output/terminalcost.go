package output

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/analysis"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// costTable prints Redis's cost per job for each run of a cell.
func (t *terminal) costTable(w io.Writer, runs []summary.RunSummary) {
	header := []string{"backend", "cmds/job", "redis cpu/job", "in cmds/job", "net in/job", "net out/job",
		"redis cpu %", "peak mem", "mem/job"}
	evicting := false
	for _, r := range runs {
		evicting = evicting || r.Config.Redis.MaxMemory > 0
	}
	if evicting {
		// A server at maxmemory: what it evicted beside what it cost.
		header = append(header, "evicted keys", "lost (cause)", "refused")
	}
	var rows [][]string
	var tops []string
	// The runs not measured, under their reason: one Redis restart leaves
	// every run of a cell unmeasured for one reason, said once.
	var notes analysis.Lines[string]
	for _, r := range runs {
		c := r.Cost
		if c == nil || c.Error != "" && c.Commands == 0 {
			// The reason goes under the table: in a cell it would stretch
			// the column to its length.
			rows = append(rows, []string{runName(r, t.s.Repeats), "n/a"})
			if c != nil {
				notes.Add(c.Error, runName(r, t.s.Repeats))
			}
			continue
		}
		row := []string{runName(r, t.s.Repeats), fmt.Sprintf("%.2f", c.Commands),
			fmt.Sprintf("%.1fµs", c.RedisCPUMicros), fmt.Sprintf("%.1fµs", c.CommandMicros),
			fmt.Sprintf("%.0fB", c.NetInBytes), fmt.Sprintf("%.0fB", c.NetOutBytes),
			fmt.Sprintf("%.0f%%", c.RedisCPUPercent), peakText(c.PeakMemoryBytes),
			fmtBytes(c.MemoryPerJobBytes)}
		if evicting {
			row = append(row, fmt.Sprint(c.EvictedKeys), lostCause(r.Ledger), fmt.Sprint(r.Ledger.Refused))
		}
		rows = append(rows, row)
		tops = append(tops, fmt.Sprintf("  %s: %s", runName(r, t.s.Repeats), topCommands(c.CommandsByName, 4)))
	}
	title := "Redis cost per job (INFO deltas over the measured window; Redis shares the CPUs with the harness):"
	if len(runs) > 0 && runs[0].ResolutionNs > 0 {
		// Cost is measured on the wall clock, per job: not stretched like
		// the latencies (scenarios/README.md, Simulated time).
		title = "Redis cost per job, in real time (INFO deltas over the measured window, per job completed in it; Redis CPU % of one real second; " +
			"not scaled by the speed; Redis shares the CPUs with the harness):"
	}
	if len(runs) > 0 && runs[0].Redis != nil && runs[0].Redis.Meter != "" {
		title = "Redis cost per job (INFO deltas over the whole run, warm-up and drain included, per job completed; Redis under callgrind):"
	}
	fmt.Fprintln(w, title)
	_ = report.Table(w, header, rows)
	for _, why := range notes.Order {
		fmt.Fprintf(w, "  %s: %s\n", strings.Join(notes.By[why], ", "), why)
	}
	if len(tops) > 0 {
		fmt.Fprintln(w, "top commands per job:")
		for _, t := range tops {
			fmt.Fprintln(w, t)
		}
	}
	instructionsTable(w, runs, t.s.Repeats)
	probeTable(w, runs, t.s.Repeats)
}

// peakText is the sampled peak, or "-" where nothing sampled it (under
// callgrind the sampler is off).
func peakText(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmtBytes(float64(b))
}

// instructionsTable prints, for runs whose Redis ran under callgrind, the
// instructions Redis executed per job, in all and by command.
func instructionsTable(w io.Writer, runs []summary.RunSummary, repeats int) {
	var rows [][]string
	for _, r := range runs {
		if c := r.Cost; c != nil && c.Instructions > 0 {
			rows = append(rows, []string{runName(r, repeats), fmt.Sprintf("%.0f", c.Instructions),
				fmt.Sprintf("%.0f", c.CommandInstructions), topCommandsFmt(c.InstructionsByCommand, 4, "%.0f")})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "Redis instructions per job (callgrind over the whole run, warm-up and drain included, divided by every job completed; without serverCron, the meter's INFO and FUNCTION LOAD; "+
		"counted, not timed: README \"The deterministic gate\" gives its noise; the run's timings are valgrind's, about 50x slow):")
	_ = report.Table(w, []string{"backend", "instr/job", "in commands/job", "top commands (instructions per job, inclusive)"}, rows)
	seen := map[string]bool{}
	for _, r := range runs {
		if r.CountNoise > 0 && !seen[r.Backend] {
			seen[r.Backend] = true
			fmt.Fprintf(w, "%s declares that its counted costs per job move up to %.0f%% between runs of one plan: %s; compare gates them no tighter.\n",
				r.Backend, 100*r.CountNoise, r.CountNoiseWhy)
		}
	}
}

func topCommands(m map[string]float64, n int) string { return topCommandsFmt(m, n, "%.2f") }

func topCommandsFmt(m map[string]float64, n int, format string) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	out := ""
	for i, e := range all {
		if i == n {
			break
		}
		if out != "" {
			out += " "
		}
		out += e.k + " " + fmt.Sprintf(format, e.v)
	}
	return out
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1fGiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1fMiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fKiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0fB", b)
}

// lostCause is the lost count with its causes: "12 (evicted 12)".
func lostCause(l ledger.Report) string {
	if l.Lost == 0 || len(l.LostCauses) == 0 {
		return fmt.Sprint(l.Lost)
	}
	return fmt.Sprintf("%d (%s)", l.Lost, ledger.FormatStates(l.LostCauses))
}
