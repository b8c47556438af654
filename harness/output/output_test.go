package output_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/summary"
)

func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		named []string
		want  int // outputs built; -1: an error
	}{
		{nil, 8},
		{[]string{"jsonl"}, 9},
		{[]string{"jsonl", "openmetrics=127.0.0.1:9464"}, 10},
		{[]string{"openmetrics"}, -1},               // needs an address
		{[]string{"openmetrics=10.0.0.1:9464"}, -1}, // loopback only
		{[]string{"openmetrics=0.0.0.0:9464"}, -1},
		{[]string{"nope"}, -1},
		{[]string{"timeseries"}, -1}, // always on: not named
		{[]string{"jsonl", "jsonl"}, -1},
		{[]string{"jsonl=file.json"}, -1},
	} {
		outs, err := output.Open(tc.named, nil)
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

// TestOpenOrder: the outputs of a plan's end come in Format.Order (the
// plots before summary.json, which the page reads, the tables last), and
// an always-on output the runner turns off (--no-plots) is not built.
func TestOpenOrder(t *testing.T) {
	formats := output.Builtin()
	for _, off := range [][]string{nil, {"plots"}} {
		outs, err := output.Open([]string{"jsonl"}, off)
		if err != nil {
			t.Fatal(err)
		}
		if want := 9 - len(off); len(outs) != want {
			t.Errorf("off %v: %d outputs, want %d", off, len(outs), want)
		}
	}
	order := []string{"plots", "summary", "page", "terminal"}
	for i := 1; i < len(order); i++ {
		if a, b := formats[order[i-1]], formats[order[i]]; a.Order >= b.Order {
			t.Errorf("%s (order %d) must come before %s (order %d)", order[i-1], a.Order, order[i], b.Order)
		}
	}
}

// TestJSONL runs the jsonl output through the calls a run makes and reads
// samples.jsonl back: a line a second, the run's names on each.
func TestJSONL(t *testing.T) {
	dir := t.TempDir()
	outs, err := output.Open([]string{"jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := &summary.RunSummary{ID: "r1-zset", Backend: "zset", Label: "zset", Client: "go-redis", Cell: 1, Repeat: 1}
	for _, o := range outs {
		if err := o.Start(output.Plan{Dir: dir}); err != nil {
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
	// Output: [jsonl openmetrics]
}

// TestDashboardReadsServedMetrics: every metric the Grafana dashboard
// (docs/grafana/aebench-live.json) queries is one the endpoint serves.
func TestDashboardReadsServedMetrics(t *testing.T) {
	data, err := os.ReadFile("../../docs/grafana/aebench-live.json")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := output.Open([]string{"openmetrics=127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var om output.Output
	for _, o := range outs {
		if _, ok := o.(interface{ Addr() string }); ok {
			om = o
		}
	}
	if om == nil {
		t.Fatal("no openmetrics output among those Open built")
	}
	if err := om.Start(output.Plan{Dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	defer om.Close()
	om.Sample(output.Run{ID: "r", Label: "zset", Client: "go-redis", Cell: 1},
		engine.SeriesPoint{Completed: 5, E2ESamples: 5, E2EP99Ms: 2, ClaimP99Ms: 1,
			E2EHist: make([]uint64, len(hist.LatencyBuckets())+1), ClaimHist: make([]uint64, len(hist.LatencyBuckets())+1)})
	rs := &summary.RunSummary{ID: "r", Label: "zset", Client: "go-redis", Cell: 1}
	if err := om.RunDone(rs, &engine.Result{}); err != nil {
		t.Fatal(err)
	}
	addr := om.(interface{ Addr() string }).Addr()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range regexp.MustCompile(`aebench_[a-z_]+`).FindAllString(string(data), -1) {
		if !strings.Contains(string(body), "\n"+name) {
			t.Errorf("the dashboard queries %s, which the endpoint does not serve", name)
		}
	}
}
