package verdict

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// TestExportShapes checks each export of the checked-in summary.json
// against its tool's documented shape: Bencher Metric Format (an object of
// benchmarks, each an object of measure slugs, each with a numeric value
// and, when there is one, lower_value <= value <= upper_value),
// github-action-benchmark's custom JSON (an array of name, unit, value,
// one direction), csv with its header, markdown tables.
func TestExportShapes(t *testing.T) {
	s, err := ReadSummary(oldSummary)
	if err != nil {
		t.Fatal(err)
	}
	export := func(format, better string) []byte {
		var b bytes.Buffer
		if err := Export(&b, s, format, ExportOptions{Better: better}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		return b.Bytes()
	}
	var bmf map[string]map[string]map[string]float64
	if err := json.Unmarshal(export(ExportBMF, ""), &bmf); err != nil || len(bmf) == 0 {
		t.Fatalf("bmf: %v (%d benchmarks)", err, len(bmf))
	}
	measure := regexp.MustCompile(`^[a-z0-9-]+$`)
	for bench, ms := range bmf {
		for name, m := range ms {
			v, ok := m["value"]
			lo, hasLo := m["lower_value"]
			hi, hasHi := m["upper_value"]
			if !measure.MatchString(name) || !ok || hasLo != hasHi || hasLo && (lo > v || v > hi) {
				t.Errorf("bmf %s %s: %v", bench, name, m)
			}
		}
	}
	for _, better := range []string{"lower", "higher"} {
		var gab []struct {
			Name  string   `json:"name"`
			Unit  string   `json:"unit"`
			Value *float64 `json:"value"`
		}
		if err := json.Unmarshal(export(ExportGAB, better), &gab); err != nil || len(gab) == 0 {
			t.Fatalf("github-action-benchmark --better %s: %v (%d entries)", better, err, len(gab))
		}
		for _, e := range gab {
			m, err := Lookup(e.Name[strings.LastIndex(e.Name, " ")+1:])
			if e.Name == "" || e.Unit == "" || e.Value == nil || err != nil || m.Better.String() != better {
				t.Errorf("github-action-benchmark --better %s: %+v (%v)", better, e, err)
			}
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(export(ExportCSV, ""))).ReadAll()
	if err != nil || len(recs) < 2 || recs[0][0] != "benchmark" || recs[0][5] != "median" {
		t.Errorf("csv: %v, %d rows", err, len(recs))
	}
	if md := string(export(ExportMarkdown, "")); !strings.Contains(md, "| metric | median | 95% CI | repeats |") {
		t.Errorf("markdown: %.200s", md)
	}
	empty := &Set{Scenario: "x"}
	if err := Export(&bytes.Buffer{}, empty, ExportBMF, ExportOptions{}); !errors.Is(err, ErrNothingToExport) {
		t.Errorf("a set with no runs: %v, want ErrNothingToExport", err)
	}
}
