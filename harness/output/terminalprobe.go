package output

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// probeOrder is the path probe's windows in the order a job meets them.
var probeOrder = []string{"enqueue", "pop", "handoff", "complete", "fail", "recover", "delayed"}

// probeTable prints the path probe of metered runs (package probe): per
// path, Redis instructions inside commands and commands per job, and the
// scripts it ran; then the bytes a record holds and a claimed job's
// allocations.
func probeTable(w io.Writer, runs []summary.RunSummary, repeats int) {
	var rows [][]string
	var notes []string
	for _, r := range runs {
		p := r.Probe
		if p == nil {
			continue
		}
		name := runName(r, repeats)
		for _, path := range probeOrder {
			c, ok := p.Paths[path]
			if !ok {
				continue
			}
			rows = append(rows, []string{name, path, fmt.Sprintf("%.0f", c.CommandInstructions), fmt.Sprintf("%.2f", c.Commands), scriptCalls(c.Scripts)})
			name = ""
		}
		note := fmt.Sprintf("%s: records %.0f B a job (all keys %.0f B), %.2f allocations a claimed and completed job", runName(r, repeats),
			p.RecordBytesPerJob, p.StoredBytesPerJob, p.ClientAllocsPerClaimedJob)
		if p.Error != "" {
			note += "; stopped early: " + p.Error
		}
		notes = append(notes, note)
	}
	if len(rows) == 0 && len(notes) == 0 {
		return
	}
	fmt.Fprintln(w, "Path probe (after the run, on its Redis emptied: each path of a job in a callgrind window of its own, per job; docs/ci.md):")
	_ = report.Table(w, []string{"backend", "path", "instr in commands/job", "cmds/job", "scripts (calls a job)"}, rows)
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
}

func scriptCalls(m map[string]float64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return m[names[i]] > m[names[j]] || m[names[i]] == m[names[j]] && names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.2f", n, m[n])
	}
	return strings.Join(parts, " ")
}
