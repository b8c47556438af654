package verdict_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/aebench/aebench/harness/runner/runnertest"
	"github.com/aebench/aebench/harness/verdict"
)

// An external test: runnertest runs scenarios through the runner, which
// imports this package.

// TestRealRun reads a real run: every metric the harness measures comes out
// of the summary, the statistics block has one group per backend with a
// value per repeat, absolute thresholds are evaluated on it, the formats
// write, and the benchstat export parses as Go benchmark text.
func TestRealRun(t *testing.T) {
	dir := runnertest.Run(t, "[zset, bucket]", 2, false)
	s, err := verdict.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"throughput", "e2e.p50", "e2e.p99", "claim.p99", "redis_cpu_us_per_job", "cmds_per_job", "memory_per_job", "lost"} {
		for _, r := range s.Runs {
			if _, ok := r.Values[name]; !ok {
				t.Errorf("run %s: %s not read", r.ID, name)
			}
		}
	}
	b := verdict.Aggregate(s)
	if len(b.Groups) != 2 {
		t.Fatalf("groups %+v", b.Groups)
	}
	for _, g := range b.Groups {
		if st, ok := g.Metric("e2e.p99"); !ok || st.N != 2 || st.Median <= 0 {
			t.Errorf("group %s: e2e.p99 %+v", g.Backend, st)
		}
	}
	if _, err := json.Marshal(b); err != nil {
		t.Fatal(err)
	}
	ths, err := verdict.ParseThresholds("test", []string{"e2e.p99 < 1ns", "throughput > 1", "recovery.p99 < 1s"})
	if err != nil {
		t.Fatal(err)
	}
	cr := verdict.Evaluate(ths, b)
	if len(cr) != 3 || !strings.Contains(cr[0].Message, "e2e.p99 < 1ns") || !strings.Contains(cr[2].Message, "cannot be checked") {
		t.Errorf("crossings %+v", cr)
	}
	c := verdict.Compare(s, s, verdict.CompareOptions{})
	if c.ExitCode() != verdict.ExitOK {
		t.Errorf("self-compare: %s", c.Headline())
	}
	// Without its complete flag (a run killed before its last write) the
	// set is incomplete: compare refuses it, --force compares anyway.
	if !s.Complete {
		t.Fatalf("a finished run is not complete: %s", s.IncompleteWhy)
	}
	if err := os.Remove(filepath.Join(dir, verdict.CompleteFlag)); err != nil {
		t.Fatal(err)
	}
	cut, err := verdict.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := verdict.Compare(s, cut, verdict.CompareOptions{}); c.ExitCode() != verdict.ExitUsage ||
		!strings.Contains(c.Headline(), "no complete flag file") || !strings.Contains(c.Headline(), "--force") {
		t.Errorf("compare with an unflagged set: exit %d, %s", c.ExitCode(), c.Headline())
	}
	if c := verdict.Compare(s, cut, verdict.CompareOptions{Force: true}); c.ExitCode() != verdict.ExitOK {
		t.Errorf("forced compare: exit %d, %s", c.ExitCode(), c.Headline())
	}
	for _, f := range verdict.Formats() {
		var buf bytes.Buffer
		if err := verdict.WriteComparison(&buf, c, f); err != nil || !strings.Contains(buf.String(), "e2e.p99") {
			t.Errorf("format %s: %v\n%s", f, err, buf.String())
		}
	}
	if err := verdict.WriteComparison(&bytes.Buffer{}, c, "xml"); err == nil || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("unknown format: %v", err)
	}
	var bench bytes.Buffer
	if err := verdict.WriteBenchstat(&bench, s); err != nil {
		t.Fatal(err)
	}
	rd := benchfmt.NewReader(&bench, "export")
	n := 0
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			n++
			if _, ok := res.Value("jobs/s"); !ok || !strings.HasPrefix(res.Name.String(), "Verdicttest/cell=1/backend=") {
				t.Errorf("result %s: %+v", res.Name, res.Values)
			}
		} else if se, ok := rd.Result().(*benchfmt.SyntaxError); ok {
			t.Errorf("syntax error: %v", se)
		}
	}
	if n != 4 {
		t.Errorf("%d benchmark lines, want one per run (4)", n)
	}
}
