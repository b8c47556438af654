package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/runner"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// TestCombine: every way a rule's parts combine, and what each verdict
// means: a missed part rules out "holds" whatever is undecided.
func TestCombine(t *testing.T) {
	for _, tc := range []struct {
		parts []tri
		want  string
	}{
		{nil, verdictNotMeasured},
		{[]tri{yes}, verdictHolds},
		{[]tri{yes, yes, yes}, verdictHolds},
		{[]tri{no}, verdictNotHold},
		{[]tri{no, no}, verdictNotHold},
		{[]tri{yes, no}, verdictPartly},
		{[]tri{yes, no, unknown}, verdictPartly},
		{[]tri{no, unknown}, verdictNotInFull},
		{[]tri{yes, unknown}, verdictInconclusive},
		{[]tri{unknown}, verdictInconclusive},
	} {
		if got := combine(tc.parts...); got != tc.want {
			t.Errorf("combine(%v) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

// TestCoverageFloor: a full run that lost repeats decides nothing below
// the coverage floor. Six pairs give [min, max] at 96.9%, and two such
// intervals 93.8% jointly: decided. Five pairs give 93.8% alone (decided)
// but 87.5% for two intervals (too few), and one pair never decides
// outside --quick, where it is a point estimate.
func TestCoverageFloor(t *testing.T) {
	pairs := func(n int, x float64) interval {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = x + float64(i)*0.01
		}
		return medianInterval("r", xs)
	}
	full, quick := judge{}, judge{point: true}
	for _, tc := range []struct {
		name string
		j    judge
		ivs  []interval
		want string
	}{
		{"six pairs, one interval", full, []interval{pairs(6, 3)}, verdictHolds},
		{"six pairs, two intervals", full, []interval{pairs(6, 3), pairs(6, 4)}, verdictHolds},
		{"five pairs, one interval", full, []interval{pairs(5, 3)}, verdictHolds},
		{"five pairs, two intervals", full, []interval{pairs(5, 3), pairs(5, 4)}, verdictTooFew},
		{"five and six pairs, three intervals", full, []interval{pairs(6, 3), pairs(6, 4), pairs(5, 5)}, verdictTooFew},
		{"one pair", full, []interval{pairs(1, 3)}, verdictTooFew},
		{"one pair under --quick", quick, []interval{pairs(1, 3)}, verdictHolds},
		{"two pairs", full, []interval{pairs(2, 3)}, verdictTooFew},
		{"six pairs missing", full, []interval{pairs(6, 1)}, verdictNotHold},
		{"five pairs missing, two intervals", full, []interval{pairs(5, 1), pairs(5, 1)}, verdictTooFew},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []tri
			for _, iv := range tc.ivs {
				parts = append(parts, tc.j.atLeast(iv, 2))
			}
			if got := tc.j.verdict(tc.ivs, parts...); got != tc.want {
				t.Errorf("verdict = %q, want %q (coverages %v, joint %.3f)", got, tc.want, coverages(tc.ivs), jointCoverage(tc.ivs))
			}
		})
	}
}

func coverages(ivs []interval) []float64 {
	var out []float64
	for _, iv := range ivs {
		out = append(out, iv.Coverage)
	}
	return out
}

// TestRuleDates: docs/claims.md's "Rules and their dates" lists every
// claim with its rule's text as the code has it, the date it was fixed and
// any earlier rule with its published verdict, as ruleHistory does.
func TestRuleDates(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "claims.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "## Rules and their dates")
	if !ok {
		t.Fatal("docs/claims.md has no section \"Rules and their dates\"")
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 4 && strings.HasSuffix(cells[0], ".yaml") {
			rows[cells[0]] = cells
		}
	}
	for _, c := range claimChecks {
		h, ok := ruleHistory[c.File]
		if !ok || h.Fixed == "" {
			t.Errorf("%s: no date in ruleHistory", c.File)
			continue
		}
		row := rows[c.File]
		if row == nil {
			t.Errorf("%s: no row in docs/claims.md's rules table", c.File)
			continue
		}
		earlier := h.Earlier
		if earlier == "" {
			earlier = "-"
		}
		for i, want := range []string{c.File, h.Fixed, c.Rule, earlier} {
			if row[i] != want {
				t.Errorf("%s: docs/claims.md says %q, the code %q", c.File, row[i], want)
			}
		}
	}
	if len(rows) != len(claimChecks) {
		t.Errorf("docs/claims.md lists %d rules, the code %d", len(rows), len(claimChecks))
	}
}

// TestSuspectRunsDecideNothing: a verdict over suspect runs is
// "inconclusive: suspect runs"; undecided verdicts stay as they are; the
// health line counts the suspect runs and the worst run-queue wait.
func TestSuspectRunsDecideNothing(t *testing.T) {
	for _, tc := range []struct {
		v       string
		suspect int
		want    string
	}{
		{verdictHolds, 0, verdictHolds},
		{verdictHolds, 1, verdictSuspect},
		{verdictNotHold, 2, verdictSuspect},
		{verdictPartly, 1, verdictSuspect},
		{verdictNotInFull, 1, verdictSuspect},
		{verdictInconclusive, 1, verdictInconclusive},
		{verdictTooFew, 1, verdictTooFew},
		{verdictNotMeasured, 1, verdictNotMeasured},
	} {
		if got := healthVerdict(tc.v, tc.suspect); got != tc.want {
			t.Errorf("healthVerdict(%q, %d) = %q, want %q", tc.v, tc.suspect, got, tc.want)
		}
	}
	sick := &summary.Health{RunQueueWaitMsPerS: 900}
	sick.Suspect("threads waited")
	runs := []summary.RunSummary{
		{Health: &summary.Health{Status: summary.Healthy, RunQueueWaitMsPerS: 120}},
		{Health: sick},
		{Calibration: true, Health: sick},
		{},
	}
	h, n := runsHealth(runs)
	if n != 1 || !strings.Contains(h, "1 of 2 runs suspect") || !strings.Contains(h, "900 ms/s") {
		t.Errorf("runsHealth = %q, %d; want 1 of 2 runs suspect, 900 ms/s", h, n)
	}
}

// TestTimingFlaws: the flaw rows that are timings run alone and read the
// median of timingRepeats runs; the counts' rows do not.
func TestTimingFlaws(t *testing.T) {
	for file, want := range map[string]bool{"flaw-seed004-keys.yaml": true, "flaw-seed002-scan.yaml": true,
		"flaw-seed002-cluster.yaml": true, "flaw-seed004.yaml": false, "flaw-seed000-mover.yaml": false} {
		if got := timingFile(file); got != want {
			t.Errorf("timingFile(%s) = %v, want %v", file, got, want)
		}
	}
	runs := []*summary.RunSummary{{Label: "a"}, {Label: "b"}, {Label: "c"}}
	val := map[string]int64{"a": 900, "b": 100, "c": 300}
	if got := runsMedian(runs, func(r *summary.RunSummary) int64 { return val[r.Label] }); got != 300 {
		t.Errorf("runsMedian = %d, want 300", got)
	}
}

func TestSplitModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		vs        []float64
		low, high int
		split     bool
	}{
		{"claim-dual's lateness at 48737f9", []float64{0.056, 0.956, 1.026, 0.94, 0.076, 0.867}, 2, 4, true},
		{"one group", []float64{0.99, 1.01, 0.98, 1.02, 0.97, 1.0}, 0, 0, false},
		{"spread under the gap", []float64{0.5, 0.9, 1.4}, 0, 0, false},
		{"one outlier above", []float64{1, 1.1, 0.9, 4}, 3, 1, true},
		{"too few", []float64{1}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			low, high, ok := splitModes(tc.vs)
			if ok != tc.split || len(low) != tc.low || len(high) != tc.high {
				t.Errorf("splitModes(%v) = %v, %v, %v; want %d low, %d high, split %v", tc.vs, low, high, ok, tc.low, tc.high, tc.split)
			}
		})
	}
}

// TestEvalDualUpperGroup: a lateness measure in two groups is judged on
// the upper one. Here dual's lateness is 1.25-1.35x the better alternative
// in 8 repeats and 0.07x in 4 (bucket's stall): the median of all twelve
// straddles 1.2 (inconclusive); the upper group misses it.
func TestEvalDualUpperGroup(t *testing.T) {
	s := &verdict.Set{}
	for rep := 1; rep <= 12; rep++ {
		dualLate, bucketLate := 1.25+0.01*float64(rep%8), 1.0
		if rep%3 == 0 {
			dualLate, bucketLate = 1, 14
		}
		for _, b := range []struct {
			label string
			late  float64
		}{{"dual", dualLate}, {"dual-background", 100}, {"bucket", bucketLate}} {
			s.Runs = append(s.Runs, verdict.Run{Label: b.label, Repeat: rep, Status: verdict.StatusOK,
				Values: map[string]float64{"e2e.p99": 5, "lateness.p99": b.late, "redis_cpu_us_per_job": 100}})
		}
	}
	ev := evalDual(s, nil, judge{})
	if ev.Verdict != verdictPartly || !strings.Contains(ev.Measured, "lateness.p99 bimodal: 4 of 12 repeats") {
		t.Errorf("verdict %q, measured %q; want %q on the upper group", ev.Verdict, ev.Measured, verdictPartly)
	}
}

// TestFlawBooksSumRuns: a timing row reads several runs of its scenario;
// a job the corrected store lost in any of them shows in the row.
func TestFlawBooksSumRuns(t *testing.T) {
	sum := &summary.Summary{}
	for rep := 1; rep <= 3; rep++ {
		v := summary.RunSummary{Label: "zset-seed002"}
		v.Ledger.SeedVariant = true
		c := summary.RunSummary{Label: "zset"}
		if rep == 1 {
			c.Ledger.Lost = 1
		}
		sum.Runs = append(sum.Runs, v, c)
	}
	r := flawOf(flawRow{File: "flaw-seed002-scan.yaml", Metric: "recover_p50_us"}, &runner.Outcome{Summary: sum})
	if r.CorrectedLost != 1 || r.Runs != 3 {
		t.Errorf("corrected lost %d over %d runs; want 1 over 3 (the first run's)", r.CorrectedLost, r.Runs)
	}
}
