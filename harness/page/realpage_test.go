package page_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/harness/page"
	"github.com/aebench/aebench/harness/runner/runnertest"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/verdict"
)

// An external test: runnertest runs scenarios through the runner, which
// imports this package.

// TestReportPage writes report.html for a real run (with its plots, and a
// comparison with itself), checks statically that it references nothing
// outside itself, then loads it in headless Chromium: no console message,
// no request beyond the file itself, and every backend on the page.
func TestReportPage(t *testing.T) {
	// A crash in each run, so the time plots mark a fault.
	dir := runnertest.Run(t, "[zset, {name: bucket, label: bucket-poll, options: {wait: poll}}]", 2, true,
		scenario.Override{Path: "faults", Value: "[{kind: worker_crash, point: in_handler, at: 800ms}]"},
		scenario.Override{Path: "workers.lease", Value: "500ms"}, scenario.Override{Path: "workers.recovery_interval", Value: "100ms"})
	runPage := readFile(t, filepath.Join(dir, page.FileName)) // the page the run wrote
	checkStatic(t, runPage)
	s, err := verdict.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var plots []page.Plot
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	for _, f := range svgs {
		plots = append(plots, page.Plot{Name: filepath.Base(f), SVG: []byte(readFile(t, f))})
	}
	// Latency over time, with the crash marked on its time axis.
	if ot := readFile(t, filepath.Join(dir, "e2e_over_time.svg")); !strings.Contains(ot, "crash") {
		t.Error("e2e_over_time.svg does not mark the crash")
	}
	if !strings.Contains(runPage, "e2e_over_time.svg") {
		t.Error("the run's page lacks the latency-over-time plot")
	}
	// The run's page embeds the plots the plots output handed it.
	if n := strings.Count(runPage, `<svg class="plot"`); len(svgs) == 0 || n < len(svgs) {
		t.Errorf("the run's page embeds %d plots, the run drew %d", n, len(svgs))
	}
	// The page renders from memory: with the results gone, it has nothing
	// to read back, and its output is the one file in its directory.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path := filepath.Join(out, "cmp.html")
	if err := page.WriteFile(path, s, s, plots); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the page left %d files in its directory, want its own only", len(ents))
	}
	checkStatic(t, readFile(t, path))
	html, _ := os.ReadFile(path)
	if !strings.Contains(string(html), "Comparison with the baseline") || strings.Count(string(html), "@font-face") != 1 {
		t.Errorf("comparison missing or fonts not declared exactly once (%d)", strings.Count(string(html), "@font-face"))
	}
	dom, console, requests := chromium(t, path)
	if len(console) > 0 {
		t.Errorf("console messages: %v", console)
	}
	if len(requests) > 0 {
		t.Errorf("the page made requests: %v", requests)
	}
	for _, b := range []string{"zset", "bucket-poll"} {
		if !strings.Contains(dom, ">"+b+"<") {
			t.Errorf("backend %s not shown", b)
		}
	}
	if n := strings.Count(dom, "<svg"); len(plots) < 3 || n < len(plots)+1 {
		t.Errorf("%d SVG plots rendered of the run's %d, want the CI charts and the run's plots", n, len(plots))
	}
	checkLayout(t, path)
}

// checkLayout loads a copy of the page with a probe script at 1,400 px:
// nothing may run past the right edge, and the verdict (status,
// thresholds, ledger) must come first after the title.
func checkLayout(t *testing.T, path string) {
	t.Helper()
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>document.title = "layout " + document.documentElement.scrollWidth + " " + document.documentElement.clientWidth;</script></body>`
	copyPath := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(copyPath, []byte(strings.Replace(string(html), "</body>", probe, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console, _ := chromium(t, copyPath, "--window-size=1400,1000")
	if len(console) > 0 {
		t.Errorf("console messages: %v", console)
	}
	var scroll, client int
	if m := regexp.MustCompile(`<title>layout (\d+) (\d+)</title>`).FindStringSubmatch(dom); m == nil {
		t.Fatalf("the probe did not run: %.300s", dom)
	} else {
		scroll, client = atoi(m[1]), atoi(m[2])
	}
	if scroll > client {
		t.Errorf("the page is %d px wide in a %d px window: it overflows to the right", scroll, client)
	}
	h1 := strings.Index(dom, "</h1>")
	v := strings.Index(dom, `id="verdict"`)
	if h1 < 0 || v < 0 || strings.Contains(dom[h1:v], "<h2") || strings.Contains(dom[h1:v], "<table") {
		t.Errorf("the verdict does not come first after the title")
	}
	top := dom[v:min(len(dom), v+3000)]
	for _, want := range []string{"status", "thresholds", "ledger", "complete"} {
		if !strings.Contains(top, want) {
			t.Errorf("the verdict at the top lacks %q", want)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// externalRE finds what a browser would fetch: src/href attributes and
// CSS url() that are not data: URLs or in-page anchors.
var externalRE = regexp.MustCompile(`(?i)(?:\b(?:src|href)\s*=\s*["']?|url\()\s*([^"')\s>]+)`)

func checkStatic(t *testing.T, html string) {
	t.Helper()
	for _, m := range externalRE.FindAllStringSubmatch(html, -1) {
		u := m[1]
		if !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "#") {
			t.Errorf("page references %q", u)
		}
	}
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Error("page has a script")
	}
}

// chromium loads the page headless and returns its DOM, the console
// messages and the requests the page made (from Chromium's net log: those
// whose network isolation key is the file:// page and whose URL is not the
// file or a data: URL). It skips the test when Chromium is not installed.
func chromium(t *testing.T, page string, flags ...string) (dom string, console, requests []string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("chromium is not installed (Debian: apt-get install -y chromium): the page was not checked in a browser")
	}
	tmp := t.TempDir()
	netLog := filepath.Join(tmp, "net.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--disable-component-update", "--disable-sync", "--user-data-dir=" + filepath.Join(tmp, "profile"),
		"--enable-logging=stderr", "--v=0", "--log-net-log=" + netLog, "--dump-dom"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return string(out), console, pageRequests(t, netLog)
}

func pageRequests(t *testing.T, netLog string) []string {
	t.Helper()
	data, err := os.ReadFile(netLog)
	if err != nil {
		t.Fatalf("net log: %v", err)
	}
	var log struct {
		Events []struct {
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("net log: %v", err)
	}
	var out []string
	for _, e := range log.Events {
		u, _ := e.Params["url"].(string)
		nik, _ := e.Params["network_isolation_key"].(string)
		if u != "" && strings.HasPrefix(nik, "file://") && !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReportPagePhases: a run with a load profile puts the phases plot
// (offered and completed jobs/s over the due backlog and e2e, the phases
// as shaded bands, each labelled) on its page, and it renders in
// Chromium.
func TestReportPagePhases(t *testing.T) {
	dir := runnertest.Run(t, "[zset, dual]", 1, true, scenario.Override{Path: "phases", Value: "[{name: calm, duration: 1s, rate: 200}, {name: surge, duration: 1s, rate: 1500}, {name: after, duration: 1500ms, rate: 200}]"})
	svg := readFile(t, filepath.Join(dir, "phases.svg"))
	for _, band := range []string{">calm<", ">surge<", ">after<"} {
		if !strings.Contains(svg, band) {
			t.Errorf("phases.svg lacks the band label %s", band)
		}
	}
	// The bands' two tints (report's bandPlotter), under the lines.
	if !strings.Contains(svg, "fill:#E8F0FA") || !strings.Contains(svg, "fill:#FAEEE4") {
		t.Error("phases.svg draws no shaded band")
	}
	for _, panel := range []string{"jobs/s", "due backlog (jobs)", "e2e p99 (ms)"} {
		if !strings.Contains(svg, ">"+panel+"<") {
			t.Errorf("phases.svg lacks the %q panel", panel)
		}
	}
	path := filepath.Join(dir, page.FileName)
	checkStatic(t, readFile(t, path))
	dom, console, requests := chromium(t, path)
	if len(console) > 0 || len(requests) > 0 {
		t.Errorf("console %v, requests %v", console, requests)
	}
	i := strings.Index(dom, "Phases: offered and completed")
	if i < 0 || !strings.Contains(dom[i:], ">surge<") {
		t.Error("the rendered page lacks the phases plot with its bands")
	}
	// The per-phase table, a row per run and phase.
	if j := strings.Index(dom, `id="phases"`); j < 0 || strings.Count(dom[j:], "<td>surge</td>") != 2 {
		t.Error("the rendered page lacks the per-phase table with each run's surge")
	}
}
