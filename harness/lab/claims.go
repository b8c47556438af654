package lab

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/runner"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// ClaimsHelp is the command's help.
const ClaimsHelp = `Usage: aebench claims [--quick] [--claims a,b] [--flaws a,b] [--dir DIR] [--out DIR] [--readme README.md]

Runs the scenarios of DIR (default scenarios/claims) and prints two tables.
The seeds' claims (claim-*.yaml): each claim, what its scenario measured,
the rule that turns the numbers into a verdict, which interval decides it,
and the verdict. Ratios are taken repeat by repeat (the repeats of a
scenario are interleaved) and the verdict reads the median of those
paired ratios with its order-statistics interval and that interval's
coverage: holds, holds partly, does not hold, or inconclusive when the
interval straddles the rule's threshold (not measured when data is
missing). The seeds' flaws (flaw-*.yaml): for each known flaw, the seed
variant that reproduces its seed's design (a backend option, off by
default), the faults injected, and what the flaw causes (jobs lost,
entries left pending, early promotions, claim conflicts...) against the
corrected backend in the same run, with where each count comes from (the
ledger, the store's audit, Redis commandstats). Writes claims.md and
claims.json into <out>/<UTC time>-claims/, beside each scenario's own
results folder.

--quick skips the plots, runs two flaw scenarios at a time (a flaw is a
count of jobs, which a neighbour's load does not change; the claims still
run alone), keeps each claim scenario's 1-2 repeats and marks every verdict
"(point estimate)" (about 6 minutes). Without it each claim scenario runs 6
repeats, whose [min, max] covers the median with 96.9%, and claim-dual 12
(its lateness falls into two groups and the upper one decides; about 27
minutes).
--claims and --flaws run only the named ones (claim-polling,
flaw-seed004,flaw-unfenced). --readme FILE rewrites the block of FILE
between its "aebench claims: begin/end" comment lines with one line per
claim and flaw of this run (make claims does it for README.md).

A seed variant's lost, duplicated or early jobs are expected (they are
what it exists to show); a claim that does not hold is a finding. The
command fails (exit 1) when a corrected backend fails its correctness
checks or shows the flaw.
`

// auditCount reads one of the store's audit counts (jobstore.Auditor).
func auditCount(name string) func(rs *summary.RunSummary) int64 {
	return func(rs *summary.RunSummary) int64 { return rs.Audit[name] }
}

// flawResult is one row of the flaws table, as claims.json holds it.
type flawResult struct {
	Seed       string `json:"seed"`
	Flaw       string `json:"flaw"`
	Scenario   string `json:"scenario"`
	Variant    string `json:"seed_variant"`
	Corrected  string `json:"corrected"`
	Faults     string `json:"faults"`
	Metric     string `json:"metric"`
	Source     string `json:"source"`
	VariantN   int64  `json:"variant_count"`
	CorrectedN int64  `json:"corrected_count"`
	// Counts: every count of both runs, for the reader's check.
	VariantLost    int64  `json:"variant_lost"`
	VariantDup     int64  `json:"variant_duplicated"`
	VariantEarly   int64  `json:"variant_early"`
	CorrectedLost  int64  `json:"corrected_lost"`
	CorrectedDup   int64  `json:"corrected_duplicated"`
	CorrectedEarly int64  `json:"corrected_early"`
	Reproduced     bool   `json:"reproduced"`
	Conditions     string `json:"conditions"`
	Results        string `json:"results"`
	Note           string `json:"note,omitempty"`
	// Runs is how many runs of each side the counts are the median of.
	Runs int `json:"runs"`
}

func Claims(ctx context.Context, args []string, opts Options, tty bool) int {
	fs := flag.NewFlagSet("claims", flag.ContinueOnError)
	fs.SetOutput(opts.Stderr)
	quick := fs.Bool("quick", false, "skip the plots")
	dir := fs.String("dir", filepath.Join("scenarios", "claims"), "folder of the flaw-*.yaml and claim-*.yaml scenarios")
	out := fs.String("out", "results", "results root")
	only := fs.String("flaws", "", "run only these flaw scenarios (file names without .yaml, comma-separated)")
	onlyClaims := fs.String("claims", "", "run only these claim scenarios (file names without .yaml, comma-separated)")
	readme := fs.String("readme", "", "rewrite the generated block of this file (README.md) from the run")
	fs.Usage = func() { fmt.Fprint(opts.Stderr, ClaimsHelp) }
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if err == nil {
			fmt.Fprintf(opts.Stderr, "aebench claims: unexpected argument %q\n%s", fs.Arg(0), ClaimsHelp)
		}
		return exitUsage
	}
	flawsToRun, err := selectFlaws(*only, *onlyClaims != "")
	if err == nil {
		var checks []claimCheck
		checks, err = selectClaims(*onlyClaims, *only != "")
		if err == nil {
			root := filepath.Join(*out, time.Now().UTC().Format("20060102T150405Z")+"-claims")
			cr := &claimsRun{ctx: ctx, opts: opts, tty: tty, dir: *dir, root: root, noPlots: *quick, readme: *readme,
				outcomes: map[string]*runner.Outcome{}}
			return cr.run(flawsToRun, checks)
		}
	}
	fmt.Fprintf(opts.Stderr, "aebench claims: %v\n", err)
	return exitUsage
}

// fullRepeats: the repeats of a claim scenario in a full (not --quick)
// run, the fewest that give the statistics a 95% CI of a median.
const fullRepeats = 6

// claimRepeats overrides fullRepeats for a claim whose rule needs more:
// claim-dual's lateness ratios can fall into two groups (bucket's lateness
// p99 is 2 ms in some runs and 20-90 ms in others; at 48737f9 four ratios
// sat near 0.95x and two near 0.07x), and its rule then judges the upper
// group alone (splitModes), which needs about 6 repeats of its own for the
// coverage floor: 12 repeats leave it that in a split like 48737f9's.
var claimRepeats = map[string]int{"claim-dual.yaml": 12}

// claimsRun runs the flaw and claim scenarios of one `aebench claims`.
type claimsRun struct {
	ctx      context.Context
	opts     Options
	tty      bool
	dir      string
	root     string
	noPlots  bool
	readme   string
	mu       sync.Mutex // outcomes, code and revision, for prefetch
	outcomes map[string]*runner.Outcome
	code     int
	// revision is the git revision the runs were made at, as the first
	// run's summary recorded it ("+dirty" for uncommitted changes).
	revision string
}

func (cr *claimsRun) run(flaws []flawRow, checks []claimCheck) int {
	if err := os.MkdirAll(cr.root, 0o755); err != nil {
		fmt.Fprintf(cr.opts.Stderr, "aebench claims: %v\n", err)
		return exitInfra
	}
	if cr.noPlots {
		if code := cr.prefetch(flaws); code != exitOK {
			return code
		}
	}
	var rows []flawResult
	for _, fr := range flaws {
		oc, code := cr.scenario(fr.File)
		if oc == nil {
			return code
		}
		row := flawOf(fr, oc)
		if !row.Reproduced {
			cr.code = max(cr.code, exitFailed)
		}
		rows = append(rows, row)
	}
	var verdicts []claimResult
	for _, c := range checks {
		oc, code := cr.scenario(c.File)
		if oc == nil {
			return code
		}
		verdicts = append(verdicts, cr.judge(c, oc))
	}
	var md string
	if len(verdicts) > 0 {
		md += verdictTable(verdicts) + "\n"
	}
	if len(rows) > 0 {
		md += flawsTable(rows)
	}
	fmt.Fprint(cr.opts.Stdout, "\n"+md)
	if err := writeClaims(cr.root, md, rows, verdicts); err != nil {
		fmt.Fprintf(cr.opts.Stderr, "aebench claims: %v\n", err)
		return exitInfra
	}
	if cr.readme != "" {
		cmd := "aebench claims"
		if cr.noPlots {
			cmd += " --quick"
		}
		if err := rewriteReadme(cr.readme, readmeBlock(verdicts, rows, time.Now(), cmd, cr.revision)); err != nil {
			fmt.Fprintf(cr.opts.Stderr, "aebench claims: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(cr.opts.Stdout, "claims: rewrote the generated block of %s\n", cr.readme)
	}
	fmt.Fprintf(cr.opts.Stdout, "\nclaims: %s (claims.md, claims.json, one results folder per scenario)\n", cr.root)
	return cr.code
}

// judge applies a claim's rule to its scenario's runs: on intervals in a
// full run, on the medians alone under --quick (marked "(point
// estimate)").
func (cr *claimsRun) judge(c claimCheck, oc *runner.Outcome) claimResult {
	res := claimResult{Seed: c.Seed, Claim: c.Claim, Scenario: c.File, Rule: c.Rule, DecidedBy: c.DecidedBy, Results: oc.Dir,
		PointEstimate: cr.noPlots}
	if len(oc.Summary.Runs) > 0 {
		res.Conditions = oc.Summary.Runs[0].Conditions
	}
	set, err := verdict.FromSummary(oc.Summary)
	if err != nil {
		res.Measured, res.Verdict = err.Error(), verdictNotMeasured
		return res
	}
	ev := c.eval(set, oc.Summary, judge{point: cr.noPlots})
	res.Measured, res.Verdict, res.Intervals = ev.Measured, ev.Verdict, ev.Intervals
	for i, iv := range ev.Intervals {
		if i == 0 || iv.Repeats < res.Repeats {
			res.Repeats = iv.Repeats
		}
	}
	var suspect int
	res.Health, suspect = runsHealth(oc.Summary.Runs)
	res.Verdict = healthVerdict(res.Verdict, suspect)
	return res
}

// healthVerdict: a verdict that decides the claim stands only on healthy
// runs; with suspect runs behind it, it is "inconclusive: suspect runs".
func healthVerdict(v string, suspect int) string {
	if suspect > 0 && decided(v) {
		return verdictSuspect
	}
	return v
}

// runsHealth says how healthy the measured runs behind a verdict were:
// how many the health check found suspect (the machine, not the store,
// may have set their numbers) and the worst run-queue wait and producer
// lateness among them.
func runsHealth(runs []summary.RunSummary) (string, int) {
	var n, suspect int
	var wait, lag float64
	for _, r := range runs {
		if r.Calibration || r.Health == nil {
			continue
		}
		n++
		if r.Health.IsSuspect() {
			suspect++
		}
		wait = max(wait, r.Health.RunQueueWaitMsPerS)
		lag = max(lag, r.Health.ScheduleLagP99Ns)
	}
	if n == 0 {
		return "", 0
	}
	h := fmt.Sprintf("%d of %d runs suspect; the harness's threads waited up to %.0f ms/s for a CPU", suspect, n, wait)
	if lag > 0 {
		h += fmt.Sprintf(", producers up to %s late at p99", verdict.FormatNs(lag))
	}
	return h, suspect
}

// decided says a verdict decides the claim one way or another.
func decided(v string) bool {
	return v == verdictHolds || v == verdictNotHold || v == verdictPartly || v == verdictNotInFull
}

// quickParallel is how many flaw scenarios --quick runs at a time. A flaw
// is a count of lost, duplicated or early jobs, which the load of a
// neighbour does not change; the claims and the timing flaws
// (timingMetrics), which a neighbour would move, always run alone.
const quickParallel = 2

// prefetch runs the flaws' scenarios quickParallel at a time, so the
// rows read them from cr.outcomes; it returns the first failure's code.
func (cr *claimsRun) prefetch(flaws []flawRow) int {
	var files []string
	for _, fr := range flaws {
		if !slices.Contains(files, fr.File) && !timingFile(fr.File) {
			files = append(files, fr.File)
		}
	}
	codes := make([]int, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range quickParallel {
		wg.Go(func() {
			for i := range next {
				if oc, code := cr.scenario(files[i]); oc == nil {
					codes[i] = code
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, c := range codes {
		if c != exitOK {
			return c
		}
	}
	return exitOK
}

// scenario runs the named scenario of the claims folder once (a flaw and
// a claim may share one), or returns nil and the exit code. Safe for
// concurrent use (prefetch).
func (cr *claimsRun) scenario(file string) (*runner.Outcome, int) {
	cr.mu.Lock()
	oc, ok := cr.outcomes[file]
	cr.mu.Unlock()
	if ok {
		return oc, exitOK
	}
	path := filepath.Join(cr.dir, file)
	var over []scenario.Override
	switch {
	case !cr.noPlots && strings.HasPrefix(file, "claim-"):
		// The full run repeats each claim scenario enough for a 95% CI of
		// every median (--quick keeps the file's few repeats: no CI).
		n := fullRepeats
		if r, ok := claimRepeats[file]; ok {
			n = r
		}
		over = append(over, scenario.Override{Path: "repeats", Value: strconv.Itoa(n)})
	case !cr.noPlots && timingFile(file):
		// A timing row reads the median of timingRepeats runs (--quick:
		// the file's one, said in the row).
		over = append(over, scenario.Override{Path: "repeats", Value: strconv.Itoa(timingRepeats)})
	}
	sc, err := scenario.Load(cr.opts.Registry, path, over...)
	if err != nil {
		fmt.Fprintf(cr.opts.Stderr, "aebench claims: %v\n", err)
		return nil, exitUsage
	}
	fmt.Fprintf(cr.opts.Stdout, "claims: running %s\n", path)
	oc, err = runner.Run(cr.ctx, sc, runner.Options{Registry: cr.opts.Registry, OutDir: cr.root, Stdout: io.Discard, TTY: cr.tty,
		NoPlots: cr.noPlots, Logf: func(string, ...any) {}})
	if err != nil || oc.Interrupted {
		fmt.Fprintf(cr.opts.Stderr, "aebench claims: %s: %v (interrupted %v)\n", path, err, oc != nil && oc.Interrupted)
		return nil, exitInfra
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if len(oc.Failed) > 0 {
		fmt.Fprintf(cr.opts.Stderr, "aebench claims: %s: corrected run(s) FAILED correctness checks: %s\n", path, strings.Join(oc.Failed, ", "))
		cr.code = exitFailed
	}
	cr.outcomes[file] = oc
	if env := oc.Summary.Environment; cr.revision == "" && env.GitRevision != "" {
		cr.revision = env.GitRevision
		if env.GitDirty {
			cr.revision += "+dirty"
		}
	}
	return oc, exitOK
}

// selectFlaws returns the rows of the named scenarios: all when none are
// named, unless only claims were named.
func selectFlaws(only string, claimsNamed bool) ([]flawRow, error) {
	return selectByFile("--flaws", only, claimsNamed, flawRows, func(f flawRow) string { return f.File })
}

// selectClaims returns the named claim checks: all when none are named,
// unless only flaws were named.
func selectClaims(only string, flawsNamed bool) ([]claimCheck, error) {
	return selectByFile("--claims", only, flawsNamed, claimChecks, func(c claimCheck) string { return c.File })
}

// selectByFile keeps the items of all whose scenario file (without .yaml)
// is named in only (comma-separated); none named: all of them, or none when
// the other kind was named.
func selectByFile[T any](flagName, only string, otherNamed bool, all []T, file func(T) string) ([]T, error) {
	if only == "" {
		if otherNamed {
			return nil, nil
		}
		return all, nil
	}
	var known []string
	for _, it := range all {
		if name := strings.TrimSuffix(file(it), ".yaml"); !slices.Contains(known, name) {
			known = append(known, name)
		}
	}
	var out []T
	for _, name := range strings.Split(only, ",") {
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("%s: unknown scenario %q: allowed are %s", flagName, name, strings.Join(known, ", "))
		}
		for _, it := range all {
			if strings.TrimSuffix(file(it), ".yaml") == name {
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// flawOf reads one flaw's row from its scenario's runs: the seed variant
// (a store declaring seed-variant, or seed 002's recovery_mode seed) and
// the corrected run beside it.
func flawOf(fr flawRow, oc *runner.Outcome) flawResult {
	r := flawResult{Seed: fr.Seed, Flaw: fr.Flaw, Scenario: fr.File, Metric: fr.Metric, Source: flawSources[fr.Metric], Results: oc.Dir}
	metric := flawMetrics[fr.Metric]
	// A store declaring seed-variant is the variant; in a scenario without
	// one, the run with seed 002's recovery_mode seed is.
	bySeedMode := true
	for _, rs := range oc.Summary.Runs {
		bySeedMode = bySeedMode && !rs.Ledger.SeedVariant
	}
	var variants, correcteds []*summary.RunSummary
	for i := range oc.Summary.Runs {
		rs := &oc.Summary.Runs[i]
		if rs.Ledger.SeedVariant || bySeedMode && rs.Config.Workers.RecoveryMode == "seed" {
			variants = append(variants, rs)
		} else {
			correcteds = append(correcteds, rs)
		}
	}
	if len(variants) == 0 || len(correcteds) == 0 {
		r.Note = "the scenario has no seed variant run or no corrected run"
		return r
	}
	variant, corrected := variants[len(variants)-1], correcteds[len(correcteds)-1]
	r.Runs = len(variants)
	r.Variant, r.Corrected = variant.Label, corrected.Label
	if bySeedMode {
		r.Variant += " recovery_mode seed (seed 002's recovery)"
		r.Corrected += " recovery_mode " + corrected.Config.Workers.RecoveryMode
	}
	r.Faults = faultList(variant)
	r.VariantN, r.CorrectedN = runsMedian(variants, metric), runsMedian(correcteds, metric)
	// The books of every run, summed: a timing row runs its scenario
	// several times, and a job lost in any of them must show.
	r.VariantLost, r.VariantDup, r.VariantEarly = sumLedger(variants)
	r.CorrectedLost, r.CorrectedDup, r.CorrectedEarly = sumLedger(correcteds)
	r.Conditions = variant.Conditions
	r.Reproduced = r.VariantN > 0 && r.CorrectedN == 0
	if fr.Ratio > 0 {
		r.Reproduced = r.VariantN > 0 && float64(r.VariantN) >= fr.Ratio*float64(r.CorrectedN)
		r.Note = fmt.Sprintf("a cost: reproduced when the seed variant's is at least %gx the corrected one's (%.0fx here)", fr.Ratio, float64(r.VariantN)/max(float64(r.CorrectedN), 1))
	}
	if timingMetrics[fr.Metric] {
		r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; a timing: the median of %d run(s) each (%d outside --quick), never run beside another scenario", r.Runs, timingRepeats), "; ")
	}
	if !r.Reproduced {
		r.Note = "not reproduced: the seed variant must show a non-zero count and the corrected backend 0 (or the ratio written for a cost)"
	}
	return r
}

func faultList(rs *summary.RunSummary) string {
	if rs.Recovery == nil || rs.Recovery.Landed == 0 {
		return "none"
	}
	var parts []string
	for k, n := range rs.Recovery.Faults {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// flawsTable writes the flaws table as Markdown.
func flawsTable(rows []flawResult) string {
	var b strings.Builder
	b.WriteString("## Seed flaws reproduced\n\n")
	b.WriteString("Each row: one run of the seed variant and one of the corrected backend in the same scenario (same seed, load and faults); " +
		"the count is what the flaw causes, from where its column says: the run's ledger (confirmed by the read-back), its counters, " +
		"the store's audit (read from Redis after the drain, the same way for both, or counted in Redis by the seed variant as its seed's steps ran), " +
		"or Redis commandstats. A seed variant's counts are expected for it, not a harness failure.\n\n")
	b.WriteString("| seed | flaw | seed variant | corrected | faults injected | counted | seed variant | corrected | reproduced |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | ---: | ---: | --- |\n")
	for _, r := range rows {
		rep := "yes"
		if r.Note != "" && r.Reproduced {
			rep = "yes (" + r.Note + ")"
		}
		if !r.Reproduced {
			rep = "no: " + r.Note
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s |\n", r.Seed, r.Flaw, r.Variant, r.Corrected, r.Faults,
			strings.ReplaceAll(r.Metric, "_", " "), r.Source, strconv.FormatInt(r.VariantN, 10), strconv.FormatInt(r.CorrectedN, 10), rep)
	}
	b.WriteString("\nConditions (per scenario):\n\n")
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Scenario] {
			seen[r.Scenario] = true
			over := ""
			if r.Runs > 1 {
				over = fmt.Sprintf(", summed over %d runs", r.Runs)
			}
			fmt.Fprintf(&b, "- %s: %s (lost/duplicated/early%s: seed variant %d/%d/%d, corrected %d/%d/%d; results %s)\n", r.Scenario, r.Conditions,
				over, r.VariantLost, r.VariantDup, r.VariantEarly, r.CorrectedLost, r.CorrectedDup, r.CorrectedEarly, r.Results)
		}
	}
	b.WriteString("\nSeed 002's own script with its untagged key names on a Redis Cluster is a test, not a row (a store with those names " +
		"would fail on a cluster before recovery): `go test ./backends/zset -run TestSeed002ScriptOnCluster -v` runs it on a 3-master " +
		"cluster; the 2 masters that do not own ae:jobs:queue refuse its write to the queue after it has marked a job Scheduled, which " +
		"strands that job (in no queue). The seed's text does not compile as written either (its for loop lacks an end).\n")
	return b.String()
}

func writeClaims(dir, md string, rows []flawResult, verdicts []claimResult) error {
	if err := os.WriteFile(filepath.Join(dir, "claims.md"), []byte("# aebench claims\n\n"+md), 0o644); err != nil {
		return err
	}
	data, err := json.MarshalIndent(map[string]any{"claims": verdicts, "flaws": rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "claims.json"), append(data, '\n'), 0o644)
}
