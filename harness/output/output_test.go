package output_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/summary"
)

func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		named []string
		want  int // outputs built; -1: an error
	}{
		{nil, 3},
		{[]string{"jsonl"}, 4},
		{[]string{"nope"}, -1},
		{[]string{"timeseries"}, -1}, // always on: not named
		{[]string{"jsonl", "jsonl"}, -1},
		{[]string{"jsonl=file.json"}, -1},
	} {
		outs, err := output.Open(tc.named)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("Open(%q): no error", tc.named)
			}
			continue
		}
		if err != nil || len(outs) != tc.want {
			t.Errorf("Open(%q) = %d outputs, %v; want %d", tc.named, len(outs), err, tc.want)
		}
	}
}

// TestJSONL runs the jsonl output through the calls a run makes and reads
// samples.jsonl back: a line a second, the run's names on each.
func TestJSONL(t *testing.T) {
	dir := t.TempDir()
	outs, err := output.Open([]string{"jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	rs := &summary.RunSummary{ID: "r1-zset", Backend: "zset", Label: "zset", Client: "go-redis", Cell: 1, Repeat: 1}
	for _, o := range outs {
		if err := o.Start(dir, nil); err != nil {
			t.Fatal(err)
		}
	}
	pts := []engine.SeriesPoint{{Second: 1, Phase: "warmup", Completed: 900}, {Second: 2, Phase: "measure", Completed: 1000, E2ESamples: 1000, E2EP99Ms: 4.5}}
	for _, p := range pts {
		for _, o := range outs {
			o.Sample(output.RunOf(rs), p)
		}
	}
	for _, o := range outs {
		if err := o.RunDone(rs, &engine.Result{Series: pts}); err != nil {
			t.Fatal(err)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 || lines[1]["run"] != "r1-zset" || lines[1]["completed"] != 1000.0 || lines[1]["phase"] != "measure" {
		t.Errorf("samples.jsonl = %v", lines)
	}
	if _, err := os.Stat(filepath.Join(dir, "timeseries.csv")); err != nil {
		t.Errorf("timeseries.csv: %v", err)
	}
}

// Optional lists the formats `aebench run --output` may turn on.
func ExampleOptional() {
	fmt.Println(output.Optional())
	// Output: [jsonl]
}
