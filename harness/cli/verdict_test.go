package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/runner/runnertest"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/verdict"
)

// TestExitCodesAgree keeps the run command's exit codes and the table in
// package verdict the same numbers.
func TestExitCodesAgree(t *testing.T) {
	for _, tc := range [][2]int{{exitOK, verdict.ExitOK}, {exitFailed, verdict.ExitCorrectness},
		{exitUsage, verdict.ExitUsage}, {exitInfra, verdict.ExitInfra}, {exitInterrupted, verdict.ExitInterrupted}} {
		if tc[0] != tc[1] {
			t.Errorf("exit code %d in main.go, %d in verdict", tc[0], tc[1])
		}
	}
}

// TestCompareCatchesPolling is the CI recipe in small: a baseline where
// zset blocks for work and a candidate where it polls (100ms). Compared
// with itself the baseline passes; the candidate fails with the regression
// exit code and names e2e p99. Five repeats a side: the rank test still
// calls the change significant when one repeat of the baseline meets a
// loaded machine's stall (with four, one overlap makes it "too noisy").
func TestCompareCatchesPolling(t *testing.T) {
	// Polling every 500ms puts the candidate's e2e p99 at hundreds of ms,
	// far beyond what a loaded machine adds to the blocking base's few ms.
	// The base gets the same setting (unused when blocking): compare
	// refuses runs whose conditions differ.
	poll := scenario.Override{Path: "store.poll_interval", Value: "500ms"}
	base := runnertest.Run(t, "[zset]", 5, false, poll)
	cand := runnertest.Run(t, "[{name: zset, options: {wait: poll}}]", 5, false, poll)

	code, out, errOut := cli(t, "compare", "--fail-on", "e2e.p99:+10%", base, base)
	if code != verdict.ExitOK {
		t.Errorf("base vs base: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "compare", base, cand, "--fail-on", "e2e.p99:+10%")
	if code != verdict.ExitThreshold || !strings.Contains(out, "regression: cell 1 zset (go-redis): e2e.p99") {
		t.Errorf("base vs polling: exit %d, want %d naming e2e.p99\n%s%s", code, verdict.ExitThreshold, out, errOut)
	}
	code, out, _ = cli(t, "compare", "--format", "markdown", "--fail-on", "e2e.p99:+10%", base, cand)
	if code != verdict.ExitThreshold || !strings.Contains(out, "| e2e.p99 * |") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	code, out, _ = cli(t, "compare", "--format", "html", "--fail-on", "e2e.p99:+10%", base, cand)
	if code != verdict.ExitThreshold || !strings.Contains(out, "Comparison with the baseline") || strings.Count(out, "<svg") < 4 {
		t.Errorf("html: exit %d, %d SVGs", code, strings.Count(out, "<svg"))
	}
	code, out, _ = cli(t, "export", "--format", "benchstat", cand)
	if code != verdict.ExitOK || strings.Count(out, "\nBenchmarkVerdicttest/cell=1/backend=zset/client=go-redis 1 ") != 5 {
		t.Errorf("export: exit %d\n%s", code, out)
	}
	code, out, errOut = cli(t, "report", cand, base)
	if code != verdict.ExitOK {
		t.Fatalf("report: exit %d %s", code, errOut)
	}
	html, err := os.ReadFile(strings.TrimSpace(out))
	if err != nil || !strings.Contains(string(html), "Comparison with the baseline") {
		t.Errorf("report %s: %v, comparison missing", out, err)
	}
}

func TestVerdictUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version": 9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"compare", "a"}, verdict.ExitUsage, "want BASE and NEW"},
		{[]string{"compare", "--fail-on", "e2e.p99:10%", "a", "b"}, verdict.ExitUsage, "signed percentage"},
		{[]string{"compare", "--fail-on", "e2e.p99:+20%", "a", "b"}, verdict.ExitUsage, "pass --loosen to loosen it"},
		{[]string{"compare", "--noise-floor", "lots", "a", "b"}, verdict.ExitUsage, "--noise-floor"},
		{[]string{"compare", "--alpha", "2", "a", "b"}, verdict.ExitUsage, "--alpha"},
		// The help: "3 unreadable or missing results".
		{[]string{"compare", filepath.Join(dir, "none"), bad}, verdict.ExitInfra, "no such file"},
		{[]string{"export", "--format", "csv", filepath.Join(dir, "none")}, verdict.ExitInfra, "no such file"},
		{[]string{"report", filepath.Join(dir, "none")}, verdict.ExitInfra, "no such file"},
		{[]string{"compare", bad, bad}, verdict.ExitUsage, "schema_version 9"},
		{[]string{"export", dir}, verdict.ExitUsage, "allowed: benchstat, bmf"},
		{[]string{"export", "--format", "github-action-benchmark", "--better", "up", dir}, verdict.ExitUsage, "--better"},
		{[]string{"report"}, verdict.ExitUsage, "want DIR"},
	} {
		code, _, errOut := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d %q, want %d with %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
	for _, c := range []string{"compare", "export", "report"} {
		if code, out, _ := cli(t, "help", c); code != verdict.ExitOK || !strings.Contains(out, "Usage: aebench "+c) {
			t.Errorf("help %s: %d %q", c, code, out)
		}
	}
	if code, out, _ := cli(t, "compare", "--metrics"); code != 0 || !strings.Contains(out, "e2e.p99") {
		t.Errorf("--metrics: %d %q", code, out)
	}
}

// TestRunThresholds: a scenario's thresholds block gates the run itself.
// A malformed entry is a usage error naming file, line and field before
// any run; a crossed one exits 4 naming the threshold and the median; the
// floor (a reference) never gates; a relative one waits for compare.
func TestRunThresholds(t *testing.T) {
	base := strings.Replace(runnertest.Scenario, "BACKENDS", "[zset, floor]", 1)
	for _, tc := range []struct {
		name, thresholds string
		code             int
		want             []string
	}{
		{"malformed", `["e2e.p99 << 20ms"]`, exitUsage, []string{"th.yaml:", "thresholds[0]", `"<<" is not an operator`}},
		{"unknown metric", `["latency < 20ms"]`, exitUsage, []string{"thresholds[0]", "latency"}},
		{"not a list", `e2e.p99 < 20ms`, exitUsage, []string{"thresholds: must be a list"}},
		{"crossed", `["e2e.p99 < 1ns", "throughput > 1", "e2e.p99 < +10%"]`, exitThreshold,
			[]string{`threshold "e2e.p99 < 1ns" crossed: cell 1 zset (go-redis)`, "passed    throughput > 1", "baseline  e2e.p99 < +10%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "th.yaml", base+"thresholds: "+tc.thresholds+"\n")
			code, out, errOut := cli(t, "run", file, "--out", filepath.Join(t.TempDir(), "r"))
			all := out + errOut
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q\n%s", w, all)
				}
			}
			if strings.Contains(all, "cell 1 floor") {
				t.Errorf("the floor gated a threshold\n%s", all)
			}
		})
	}
}

// TestRunQuiet: --quiet leaves only the final tables and the results line
// on stdout.
func TestRunQuiet(t *testing.T) {
	file := writeFile(t, "q.yaml", strings.Replace(runnertest.Scenario, "BACKENDS", "[zset]", 1))
	code, out, errOut := cli(t, "run", file, "--quiet", "--out", filepath.Join(t.TempDir(), "r"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, unwanted := range []string{"environment:", "run 1/", "[zset]", "=> c"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("--quiet stdout has %q\n%s", unwanted, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(out, "e2e p99") || !strings.HasPrefix(lines[len(lines)-1], "results: ") {
		t.Errorf("--quiet stdout lacks the table or the results line\n%s", out)
	}
}
