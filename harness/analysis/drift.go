package analysis

import (
	"fmt"

	"github.com/aebench/aebench/harness/summary"
)

// DriftHeader heads the per-window table of a drift run (DriftRows).
func DriftHeader() []string {
	return []string{"backend", "window", "done", "used mem", "held jobs", "mem/job held", "frag", "cpu/job", "cmds/job", "e2e p99", "qwait p99"}
}

// DriftRows are run name's drift windows, one row each.
func DriftRows(name string, d *summary.Drift) [][]string {
	var rows [][]string
	for _, w := range d.Windows {
		rows = append(rows, []string{name, fmt.Sprintf("%.0f-%.0fs", w.FromS, w.ToS), fmt.Sprint(w.Completed),
			fmt.Sprintf("%.1fMiB", w.UsedBytes/(1<<20)), fmt.Sprintf("%.0f", w.HeldJobs), fmt.Sprintf("%.0fB", w.MemPerJobBytes),
			fmt.Sprintf("%.2f", w.Fragmentation), fmt.Sprintf("%.1fµs", w.RedisCPUPerJobUs), fmt.Sprintf("%.2f", w.CommandsPerJob),
			fmt.Sprintf("%.1fms", w.E2EP99Ms), fmt.Sprintf("%.1fms", w.QueueWaitP99Ms)})
	}
	return rows
}

// DriftLines are run name's drift verdicts, one line per metric.
func DriftLines(name string, d *summary.Drift) []string {
	var out []string
	for _, v := range d.Verdicts {
		if v.Word == "not measured" {
			out = append(out, fmt.Sprintf("%s: %s: not measured (no value in the first window)", name, v.Metric))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s %s: %.2fx from the first window to the last (%.4g -> %.4g; 95%% interval of the trend %.2f-%.2fx; drifts above %.2fx)",
			name, v.Metric, v.Word, v.Ratio, v.First, v.Last, v.Lo, v.Hi, summary.DriftThreshold))
	}
	return out
}

// DriftNote explains the drift table once.
const DriftNote = "Drift: the measured window cut into equal windows (drift.windows). Memory per job held: Redis's used memory above the run's baseline, per job the store held (backlog, in flight, finished within store.retention); " +
	"frag: used_memory_rss / used_memory; cpu and cmds per job completed in the window. The verdict compares the last window with the first."
