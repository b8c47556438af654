package report

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// sampleDir is where the plots go: a temp dir, or AEBENCH_REPORT_SAMPLES when
// a person wants to open the PNGs and look at them.
func sampleDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("AEBENCH_REPORT_SAMPLES"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// latencyHist records n log-normal latencies (median medianMs, ns) with a
// rare slow tail, the shape a Redis job store shows.
func latencyHist(t *testing.T, seed uint64, n int, medianMs, sigma float64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 60e9, 3)
	r := rand.New(rand.NewPCG(seed, seed+1))
	for range n {
		v := medianMs * math.Exp(sigma*r.NormFloat64())
		if r.Float64() < 0.002 {
			v *= 5 + 20*r.Float64()
		}
		if err := h.RecordValue(int64(v * 1e6)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func histOf(t *testing.T, ns ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 60e9, 3)
	for _, v := range ns {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// checkFigure asserts both files exist, the PNG decodes at the intended
// size, and the SVG is an SVG with text and an embedded font.
func checkFigure(t *testing.T, pathNoExt string) {
	t.Helper()
	f, err := os.Open(pathNoExt + ".png")
	if err != nil {
		t.Fatalf("png: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("png does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1440 || b.Dy() != 900 {
		t.Errorf("png is %dx%d, want 1440x900", b.Dx(), b.Dy())
	}
	svg, err := os.ReadFile(pathNoExt + ".svg")
	if err != nil {
		t.Fatalf("svg: %v", err)
	}
	for _, want := range []string{"<svg", "<text", "@font-face"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

func TestPercentilePlot(t *testing.T) {
	dir := sampleDir(t)
	cases := []struct {
		name   string
		series func(t *testing.T) []LatencySeries
		svgHas []string
	}{
		{"three_backends", func(t *testing.T) []LatencySeries {
			return []LatencySeries{
				{"lua-claim (asynq-like)", latencyHist(t, 1, 120_000, 0.45, 0.35)},
				{"zset-race (seed)", latencyHist(t, 2, 120_000, 0.9, 0.6)},
				{"streams", latencyHist(t, 3, 120_000, 0.30, 0.25)},
			}
		}, []string{"lua-claim (asynq-like)", "99.9%", "99.99%", "99.999%"}},
		{"empty_and_nil_series", func(t *testing.T) []LatencySeries {
			return []LatencySeries{
				{"good", latencyHist(t, 4, 500, 1, 0.3)},
				{"empty", histOf(t)},
				{"nil", nil},
			}
		}, []string{"(no data)", "99%"}},
		{"all_empty", func(t *testing.T) []LatencySeries {
			return []LatencySeries{{"empty", histOf(t)}}
		}, []string{"no data"}},
		{"no_series", func(t *testing.T) []LatencySeries { return nil }, []string{"no data"}},
		{"zeros", func(t *testing.T) []LatencySeries {
			return []LatencySeries{{"zero", histOf(t, 0, 0, 0)}, {"mixed", histOf(t, 0, 5e5, 1e6, 2e6)}}
		}, nil},
		{"single_point", func(t *testing.T) []LatencySeries {
			return []LatencySeries{{"one", histOf(t, 1_500_000)}}
		}, []string{"one"}},
		{"identical_values", func(t *testing.T) []LatencySeries {
			return []LatencySeries{{"flat", histOf(t, 2e6, 2e6, 2e6, 2e6)}}
		}, nil},
		{"many_series", func(t *testing.T) []LatencySeries {
			var s []LatencySeries
			for i := range 9 {
				s = append(s, LatencySeries{Label: "backend " + string(rune('A'+i)), Hist: latencyHist(t, uint64(10+i), 2000, 0.2*float64(i+1), 0.4)})
			}
			return s
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "percentile_"+tc.name)
			_, err := PercentilePlot(path, "Claim latency, "+tc.name, "rate 2000/s open-loop, 4 workers x 8, redis 7.0.15 embedded, go-redis", tc.series(t))
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, path)
			svg, _ := os.ReadFile(path + ".svg")
			for _, want := range tc.svgHas {
				if !strings.Contains(string(svg), want) {
					t.Errorf("svg lacks %q", want)
				}
			}
		})
	}
}

func TestPercentileCurve(t *testing.T) {
	h := latencyHist(t, 7, 10_000, 1, 0.5)
	pts := percentileCurve(h)
	if len(pts) < 20 {
		t.Fatalf("only %d points", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].X < pts[i-1].X || pts[i].Y < pts[i-1].Y {
			t.Fatalf("curve not monotone at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	last := pts[len(pts)-1]
	if last.X < 10_000 {
		t.Errorf("max drawn at x=%v, want >= sample count 10000", last.X)
	}
	if want := float64(h.Max()) / 1e6; last.Y != want {
		t.Errorf("last point y=%v, want max %v", last.Y, want)
	}
	if got := percentileCurve(histOf(t, 0)); len(got) != 1 || got[0].Y != LatencyFloorMs {
		t.Errorf("zero latency: got %v, want one point at the floor", got)
	}
}

func TestTickers(t *testing.T) {
	pt := percentileTicks{}.Ticks(1, 1e5)
	var labels []string
	for _, tk := range pt {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got, want := strings.Join(labels, " "), "0% 50% 90% 99% 99.9% 99.99% 99.999%"; got != want {
		t.Errorf("percentile tick labels %q, want %q", got, want)
	}
	for _, r := range [][2]float64{{0, 1}, {-1, 5}, {1, 1}, {math.NaN(), 2}, {2, math.Inf(1)}} {
		_ = logTicks{}.Ticks(r[0], r[1]) // must not panic
		_ = percentileTicks{}.Ticks(r[0], r[1])
	}
	lt := logTicks{}.Ticks(0.2, 50)
	var ls []string
	for _, tk := range lt {
		if tk.Label != "" {
			ls = append(ls, tk.Label)
		}
	}
	if got, want := strings.Join(ls, " "), "0.2 0.5 1 2 5 10 20 50"; got != want {
		t.Errorf("log tick labels %q, want %q", got, want)
	}
}

func TestTimePlot(t *testing.T) {
	dir := sampleDir(t)
	secs := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i)
		}
		return x
	}
	wave := func(n int, base, dip float64, at int) []float64 {
		y := make([]float64, n)
		r := rand.New(rand.NewPCG(uint64(base), 9))
		for i := range y {
			y[i] = base * (1 + 0.03*r.NormFloat64())
			if i >= at && i < at+6 {
				y[i] = base * dip
			}
		}
		return y
	}
	cases := []struct {
		name    string
		lines   []Line
		markers []Marker
		wantErr bool
	}{
		{"throughput_with_faults", []Line{
			{"lua-claim", secs(60), wave(60, 19500, 0.1, 20)},
			{"zset-race", secs(60), wave(60, 8200, 0.0, 20)},
			{"streams", secs(60), wave(60, 42000, 0.4, 20)},
		}, []Marker{{X: 20, Label: "redis paused"}, {X: 26, Label: "redis resumed"}, {X: 45, Label: "worker SIGKILL"}, {X: 0, To: 20, Label: "steady"}, {X: 20, To: 40, Label: "overload"}}, false},
		{"single_point", []Line{{"one", []float64{3}, []float64{7}}}, []Marker{{X: 3, Label: "here"}}, false},
		{"empty_lines", []Line{{"none", nil, nil}}, nil, false},
		{"nothing", nil, nil, false},
		{"nan_and_negative", []Line{{"delta", []float64{0, 1, 2, 3}, []float64{-5, math.NaN(), 3, math.Inf(1)}}}, nil, false},
		{"mismatched", []Line{{"bad", []float64{0, 1}, []float64{1}}}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "time_"+tc.name)
			_, err := TimePlot(path, "Throughput, "+tc.name, "rate unlimited, 4 workers x 8, redis 7.0.15 embedded", "jobs/s", tc.lines, tc.markers)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, path)
		})
	}
}

func TestPlotBadPath(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PercentilePlot(filepath.Join(blocker, "x"), "t", "c", nil); err == nil {
		t.Error("want an error writing under a regular file")
	}
	if _, err := TimePlot("", "t", "c", "y", nil, nil); err == nil {
		t.Error("want an error for an empty path")
	}
}
