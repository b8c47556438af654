package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aebench/aebench/harness/page"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/suggest"
)

const compareHelp = `Usage: aebench compare [flags] BASE NEW

Compares two result sets (results directories or summary.json files): runs
are matched by matrix cell, backend label and client; per metric it prints
the base and new medians over the repeats with their 95% confidence
intervals, the change in percent with its interval, the Mann-Whitney U
p-value and a verdict: better, worse, no change or too noisy.

A regression is a gated metric (marked *) that got worse significantly AND
by more than its limit. The gated metrics are throughput, e2e.p50, e2e.p99
and redis_cpu_us_per_job, each at the noise floor, plus every metric a
--fail-on names, at its own limit (a --fail-on on a gated metric sets that
metric's limit, lower only unless --loosen, which the verdict then names;
it never removes the other gates). The
gated tests share the significance level (Bonferroni), so two result sets of
the same code fail the gate at most alpha of the time. A metric with too few
repeats for the test to reach its level says "too noisy", never "worse":
with 4 backends and 4 gated metrics it takes 6 repeats per side.

Groups whose conditions differ (scenario, machine, load, rates, client,
Redis version, handler...), groups present on one side only and incomplete
result sets are refused (exit 2) unless --force.

Flags:
  --fail-on METRIC:±N%  also gate on this metric, at this limit (repeatable), e.g.
                        --fail-on e2e.p99:+10% --fail-on throughput:-5%; on a gated
                        metric it only tightens (a limit above the default is refused)
  --loosen              let a --fail-on loosen a gated metric's limit; the verdict
                        names every gate loosened
  --noise-floor N%      smallest change called better or worse (default 10%)
  --alpha A             significance level of the gate (default 0.05)
  --format F            text (default), json, markdown, or html: one page,
                        the verdict first, with BASE's charts beside NEW's
  --force               compare despite different conditions
  --backends A,B        compare only these backends' runs (by name or label) on
                        both sides, e.g. a run of every strategy with one of zset
  --metrics             list the metrics, their units and directions
  --strict-health       exit 5 when a compared run of either side is suspect
                        (its measurement health: docs/harness.md)

A comparison that rests on suspect runs says so under its verdict.

Exit codes: 0 no regression, 1 a run of NEW failed its correctness checks,
2 usage error or refused comparison, 3 unreadable or missing results, 4 regression,
5 (--strict-health) a compared run was suspect.
`

const exportHelp = `Usage: aebench export --format F [--better lower|higher] DIR

Writes the result set in DIR (or a summary.json) to stdout, for the tools
CI keeps benchmark history in:
  benchstat                Go benchmark text, one line per run, named
                           <Scenario>/cell=N/backend=B/client=C, one value per
                           metric (ns/e2e-p99, jobs/s, ...); then
                           benchstat base.txt new.txt compares two sets
  bmf                      Bencher Metric Format JSON: per benchmark, per
                           measure, the median and its 95% CI (lower/upper)
  github-action-benchmark  its custom JSON array, metrics of one direction:
                           --better lower (customSmallerIsBetter, default) or
                           --better higher (customBiggerIsBetter)
  csv, markdown            the statistics block's medians and intervals
Benchmarks are named <scenario>/cell=N/backend=B/client=C, measures by
the metric catalog (aebench compare --metrics). docs/ci.md shows the jobs.

Exit codes: 0 written, 2 usage error, 3 unreadable or missing results, or
nothing measured to export.
`

const reportHelp = `Usage: aebench report [--out FILE] DIR [BASE]

Writes DIR/report.html (or FILE): one self-contained page (no external
requests) with the conditions, the statistics over repeats, the ledger, the
faults, the run's plots inlined as SVG, and with BASE the comparison.
`

// verdictCommand runs compare, export and report; ok is false for another
// command.
func verdictCommand(name string, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	switch name {
	case "compare":
		return cmdCompare(args, stdout, stderr), true
	case "export":
		return cmdExport(args, stdout, stderr), true
	case "report":
		return cmdReport(args, stdout, stderr), true
	}
	return 0, false
}

func verdictHelp(name string) (string, bool) {
	h, ok := map[string]string{"compare": compareHelp, "export": exportHelp, "report": reportHelp}[name]
	return h, ok
}

// parseInterleaved parses flags that may come before or after the
// positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagErr(fs, err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagErr adds a "did you mean" to an undefined flag's error.
func flagErr(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return fmt.Errorf("%w%s", err, suggest.DidYouMean(strings.TrimPrefix(name, "-"), names))
}

func usageErr(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "aebench %s: %v\n(see aebench help %s)\n", cmd, err, cmd)
	return verdict.ExitUsage
}

// loadErr reports a result set that cannot be read: a path that does not
// exist is a usage error, a file that cannot be read or parsed is not.
// loadErr reports results that cannot be read: exit 3 (unreadable or
// missing results, as every command's help says), 2 for a file of a
// schema this aebench does not read.
func loadErr(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "aebench %s: %v\n", cmd, err)
	if errors.Is(err, verdict.ErrSchema) {
		return verdict.ExitUsage
	}
	return verdict.ExitInfra
}

// addFailOns parses the --fail-on flags into o, holding each to
// tightening a gated metric unless loosen (verdict.CheckFailOn).
func addFailOns(o *verdict.CompareOptions, flags []string, loosen bool) error {
	for _, f := range flags {
		t, err := verdict.ParseFailOn(f)
		if err != nil {
			return err
		}
		o.FailOn = append(o.FailOn, t)
	}
	var err error
	o.Loosened, err = verdict.CheckFailOn(o.FailOn, o.NoiseFloor, loosen)
	return err
}

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aebench compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var failOn multiFlag
	fs.Var(&failOn, "fail-on", "")
	floor := fs.String("noise-floor", "10%", "")
	alpha := fs.Float64("alpha", verdict.DefaultAlpha, "")
	format := fs.String("format", verdict.FormatText, "")
	force := fs.Bool("force", false, "")
	metrics := fs.Bool("metrics", false, "")
	strict := fs.Bool("strict-health", false, "")
	loosen := fs.Bool("loosen", false, "")
	only := fs.String("backends", "", "")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageErr(stderr, "compare", err)
	}
	if *metrics {
		for _, m := range verdict.Catalog() {
			fmt.Fprintf(stdout, "%-22s %-7s %s is better  %s\n", m.Name, m.Unit, m.Better, m.Doc)
		}
		return verdict.ExitOK
	}
	o := verdict.CompareOptions{Alpha: *alpha, Force: *force, StrictHealth: *strict}
	if o.NoiseFloor, err = parsePercent(*floor); err != nil {
		return usageErr(stderr, "compare", fmt.Errorf("--noise-floor: %w", err))
	}
	if *alpha <= 0 || *alpha >= 1 {
		return usageErr(stderr, "compare", fmt.Errorf("--alpha %g is not between 0 and 1 (exclusive)", *alpha))
	}
	if err := addFailOns(&o, failOn, *loosen); err != nil {
		return usageErr(stderr, "compare", err)
	}
	if len(pos) != 2 {
		return usageErr(stderr, "compare", fmt.Errorf("want BASE and NEW, got %d arguments (%s)", len(pos), strings.Join(pos, " ")))
	}
	base, err := verdict.Load(pos[0])
	if err != nil {
		return loadErr(stderr, "compare", err)
	}
	cand, err := verdict.Load(pos[1])
	if err != nil {
		return loadErr(stderr, "compare", err)
	}
	if err := prepareSides(&o, base, cand, *only, stderr); err != nil {
		return usageErr(stderr, "compare", err)
	}
	c := verdict.Compare(base, cand, o)
	if *format == "html" {
		// One page: the verdict first, NEW's figures, and BASE's beside
		// them in the comparison and its overlaid charts.
		plots, err := plotsIn(cand.Dir)
		if err == nil {
			err = page.Write(stdout, cand, base, plots)
		}
		if err != nil {
			fmt.Fprintf(stderr, "aebench compare: %v\n", err)
			return verdict.ExitInfra
		}
		fmt.Fprintln(stderr, c.Headline())
		return c.ExitCode()
	}
	if err := verdict.WriteComparison(stdout, c, *format); err != nil {
		return usageErr(stderr, "compare", fmt.Errorf("--format: %w", err))
	}
	if code := c.ExitCode(); code != verdict.ExitOK {
		if *format != verdict.FormatText {
			fmt.Fprintln(stderr, c.Headline())
		}
		return code
	}
	return verdict.ExitOK
}

// prepareSides keeps the runs of the backends only names (all when ""),
// and adds each side's scenario thresholds that tighten a gate to o.
func prepareSides(o *verdict.CompareOptions, base, cand *verdict.Set, only string, stderr io.Writer) error {
	for _, side := range []*verdict.Set{base, cand} {
		if only == "" {
			continue
		}
		if err := side.OnlyBackends(strings.Split(only, ",")); err != nil {
			return fmt.Errorf("--backends: %w", err)
		}
	}
	for _, side := range []*verdict.Set{base, cand} {
		fromScenario, err := verdict.ScenarioFailOn(side)
		if err != nil {
			return err
		}
		kept, dropped := verdict.TightenOnly(fromScenario, o.NoiseFloor)
		for _, d := range dropped {
			fmt.Fprintf(stderr, "aebench compare: %s: scenario threshold %s not applied: a scenario's thresholds only tighten a gate\n", side.Source, d)
		}
		o.FailOn = append(o.FailOn, kept...)
	}
	return nil
}

// parsePercent reads "10%" or "10" as 0.10.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v >= 1000 {
		return 0, fmt.Errorf("%q is not a percentage like 10%%", s)
	}
	return v / 100, nil
}

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aebench export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "", "")
	better := fs.String("better", "lower", "")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageErr(stderr, "export", err)
	}
	if !slices.Contains(verdict.ExportFormats(), *format) {
		return usageErr(stderr, "export", fmt.Errorf("--format %q: allowed: %s", *format, strings.Join(verdict.ExportFormats(), ", ")))
	}
	if *better != "lower" && *better != "higher" {
		return usageErr(stderr, "export", fmt.Errorf("--better %q: allowed: lower, higher", *better))
	}
	if len(pos) != 1 {
		return usageErr(stderr, "export", fmt.Errorf("want one results DIR, got %d arguments", len(pos)))
	}
	s, err := verdict.Load(pos[0])
	if err != nil {
		return loadErr(stderr, "export", err)
	}
	var buf bytes.Buffer
	if err := verdict.Export(&buf, s, *format, verdict.ExportOptions{Better: *better}); err != nil {
		fmt.Fprintf(stderr, "aebench export: %s: %v\n", pos[0], err)
		if errors.Is(err, verdict.ErrNothingToExport) {
			return verdict.ExitInfra
		}
		return verdict.ExitUsage
	}
	if buf.Len() == 0 {
		fmt.Fprintf(stderr, "aebench export: %s: %v\n", pos[0], verdict.ErrNothingToExport)
		return verdict.ExitInfra
	}
	_, _ = stdout.Write(buf.Bytes())
	return verdict.ExitOK
}

func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("aebench report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageErr(stderr, "report", err)
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageErr(stderr, "report", fmt.Errorf("want DIR and an optional BASE, got %d arguments", len(pos)))
	}
	s, err := verdict.Load(pos[0])
	if err != nil {
		return loadErr(stderr, "report", err)
	}
	var base *verdict.Set
	if len(pos) == 2 {
		if base, err = verdict.Load(pos[1]); err != nil {
			return loadErr(stderr, "report", err)
		}
	}
	path := *out
	if path == "" {
		path = filepath.Join(s.Dir, page.FileName)
	}
	plots, err := plotsIn(s.Dir)
	if err == nil {
		err = page.WriteFile(path, s, base, plots)
	}
	if err != nil {
		fmt.Fprintf(stderr, "aebench report: %v\n", err)
		return verdict.ExitInfra
	}
	fmt.Fprintln(stdout, path)
	return verdict.ExitOK
}

// plotsIn reads the run's SVG plots from its results directory, for a page
// written after the run (aebench report); during a run the plots output
// hands them to the page in memory.
func plotsIn(dir string) ([]page.Plot, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		return nil, err
	}
	var out []page.Plot
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Plot{Name: filepath.Base(f), SVG: data})
	}
	return out, nil
}
