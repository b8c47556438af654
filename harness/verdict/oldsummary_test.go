package verdict

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/summary"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// oldSummary is a summary.json written by the aebench of 2026-11-28
// (schema 2, before the results model of issue 43): crash-recovery.yaml,
// zset and stream, two repeats. Files written before a change of the model
// must still read, and read to the same values.
const oldSummary = "testdata/summary-v2-2026-11-28.json"

// TestOldSummaryStillReads reads the checked-in old summary.json and checks
// every run's catalog values against the golden file written from the
// model of the day, and that compare takes it against itself.
func TestOldSummaryStillReads(t *testing.T) {
	s, err := ReadSummary(oldSummary)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, r := range s.Runs {
		got[r.ID] = r.Values
	}
	golden := filepath.Join("testdata", "summary-v2-2026-11-28.values.json")
	if *update {
		data, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]float64
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs read, golden has %d", len(got), len(want))
	}
	for id, wv := range want {
		gv := got[id]
		for name, w := range wv {
			if g, ok := gv[name]; !ok || g != w {
				t.Errorf("run %s metric %s = %v (present %v), golden %v", id, name, g, ok, w)
			}
		}
		for name := range gv {
			if _, ok := wv[name]; !ok {
				t.Errorf("run %s metric %s read, absent from the golden file", id, name)
			}
		}
	}
	c := Compare(s, s, CompareOptions{})
	if len(c.Pairs) == 0 {
		t.Fatal("compare of the old file with itself matched no group")
	}
	if code := c.ExitCode(); code != ExitOK {
		t.Errorf("compare of the old file with itself exits %d: %s", code, c.Headline())
	}
}

// TestCompareSuspect: a comparison that rests on a suspect run says so,
// and with StrictHealth exits ExitSuspect instead of deciding.
func TestCompareSuspect(t *testing.T) {
	s, err := ReadSummary(oldSummary)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(s, s, CompareOptions{StrictHealth: true})
	if len(c.Suspect) != 0 || c.ExitCode() != ExitOK {
		t.Fatalf("no run judged: suspect %v, exit %d", c.Suspect, c.ExitCode())
	}
	n, _ := ReadSummary(oldSummary)
	n.Runs[0].Health = &summary.Health{Status: summary.Suspect, Reasons: []string{"its threads waited 1093 ms/s for a CPU"}}
	c = Compare(s, n, CompareOptions{})
	if c.ExitCode() != ExitOK || !strings.Contains(c.Headline(), "decided on 1 suspect run") {
		t.Errorf("without --strict-health: exit %d, %q", c.ExitCode(), c.Headline())
	}
	c = Compare(s, n, CompareOptions{StrictHealth: true})
	if c.ExitCode() != ExitSuspect || !strings.Contains(c.Headline(), "1093 ms/s") {
		t.Errorf("with --strict-health: exit %d, %q", c.ExitCode(), c.Headline())
	}
}
