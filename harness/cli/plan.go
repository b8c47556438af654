package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/runner"
	"github.com/aebench/aebench/harness/scenario"
)

const planHelp = `Usage: aebench plan [flags] SCENARIO

Checks a scenario without measuring anything and prints its plan: the
expanded matrix (one line per cell with what varies), the backends, the
run count (calibration and repeats included) and an estimate of the wall
time. It makes every check a run makes before its first run: the file and
its --set overrides, each Redis the plan uses (started, or reached and
asked what it refuses when given by URL), and each backend built with its
options (on a private server for a URL), so a wrong value fails here.
It takes aebench run's flags.

Exit codes: 0 the plan can run, 2 a usage or configuration error (file,
line, field), 3 an infrastructure error (no Redis).
`

func cmdPlan(ctx context.Context, args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	rf, code, done := parseRunFlags(args, stdout, stderr)
	if done {
		return code
	}
	sc, err := scenario.Load(opts.Registry, rf.file, rf.overrides...)
	if err == nil && rf.backends != "" {
		err = sc.SelectBackends(strings.Split(rf.backends, ","))
	}
	if err != nil {
		fmt.Fprintf(stderr, "aebench plan: %v\n", err)
		return exitUsage
	}
	printPlan(stdout, sc, rf.noPlots)
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	if err := runner.Preflight(ctx, sc, runner.Options{Registry: opts.Registry, Logf: logf}); err != nil {
		return runExit(nil, err, stderr, false)
	}
	fmt.Fprintln(stdout, "preflight: ok (every Redis reached, every backend built with its options)")
	return exitOK
}

// printPlan prints the expanded plan and its estimate.
func printPlan(w io.Writer, sc *scenario.Scenario, noPlots bool) {
	runs := sc.Runs()
	calib := 0
	for _, r := range runs {
		if r.Calibration {
			calib++
		}
	}
	fmt.Fprintf(w, "plan %s (%s): %d cells, %d runs (%d repeats x backends per cell, %d calibration)\n",
		sc.Name, sc.File, len(sc.Cells), len(runs), sc.Repeats, calib)
	for _, w2 := range sc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", w2)
	}
	for _, c := range sc.Cells {
		var names []string
		for _, b := range c.Backends {
			names = append(names, b.Label)
		}
		vary := strings.Join(c.Vary, " ")
		if vary == "" {
			vary = "(no matrix)"
		}
		fmt.Fprintf(w, "  cell %d: %s; backends %s\n", c.Index, vary, strings.Join(names, ", "))
	}
	if len(sc.Cells) > 0 {
		fmt.Fprintf(w, "conditions of cell 1: %s\n", sc.Cells[0].Base.Conditions(""))
	}
	if second := roundOrder(runs, 2); sc.Repeats > 1 && len(second) > 1 {
		fmt.Fprintf(w, "order: round by round, each starting one backend later in a cell's list (round 2: %s)\n", strings.Join(second, ", "))
	}
	fmt.Fprintf(w, "estimate: about %s of wall time (windows, drains, set-up and plots; a prefill's load not included)\n",
		runner.Estimate(sc, noPlots).Round(time.Second))
}

// roundOrder is the labels of the first cell's runs in round r, in the
// order they run.
func roundOrder(runs []scenario.RunSpec, r int) []string {
	var out []string
	for _, spec := range runs {
		if spec.Repeat == r && !spec.Calibration && spec.Cell == runs[0].Cell {
			out = append(out, spec.Config.Backend.Label)
		}
	}
	return out
}
