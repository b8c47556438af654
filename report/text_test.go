package report

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	cases := []struct {
		name    string
		header  []string
		rows    [][]string
		want    string
		wantErr bool
	}{
		{
			name:   "numbers right, text left",
			header: []string{"backend", "jobs/s", "p99", "note"},
			rows: [][]string{
				{"lua-claim", "19,500", "1.05ms", "ok"},
				{"zset-race (seed)", "8200", "12.3ms", "head-of-line race"},
				{"streams", "-", "0.55ms", ""},
			},
			want: "" +
				"backend           jobs/s     p99  note\n" +
				"----------------  ------  ------  -----------------\n" +
				"lua-claim         19,500  1.05ms  ok\n" +
				"zset-race (seed)    8200  12.3ms  head-of-line race\n" +
				"streams                -  0.55ms\n",
		},
		{
			name:   "short rows padded, runes counted",
			header: []string{"name", "µs/job"},
			rows:   [][]string{{"a"}, {"ééé", "3"}},
			want: "" +
				"name  µs/job\n" +
				"----  ------\n" +
				"a\n" +
				"ééé        3\n",
		},
		{
			name:   "newline in a cell stays on one line",
			header: []string{"k", "v"},
			rows:   [][]string{{"a\nb", "1"}},
			want:   "k    v\n---  -\na b  1\n",
		},
		{name: "no header", header: nil, wantErr: true},
		{name: "row too long", header: []string{"a"}, rows: [][]string{{"1", "2"}}, wantErr: true},
		{name: "header only", header: []string{"a", "b"}, want: "a  b\n-  -\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Table(&b, tc.header, tc.rows)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTableWriteError(t *testing.T) {
	if err := Table(failWriter{}, []string{"a"}, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("want the writer's error wrapped, got %v", err)
	}
}

func TestIsNumeric(t *testing.T) {
	cases := map[string]bool{
		"12": true, "-3.5": true, "1,234,567": true, "12.5ms": true, "99%": true, "3x": true,
		"1.2 KiB": true, "4e6": true, "~40k": true, "NaN": true, "+Inf": true, "250µs": true, "1.5e-3s": true,
		"abc": false, "v1": false, "2024-01-01": false, "1.2.3": false, "12 jobs per second": false, "": false, "e5": false,
	}
	for in, want := range cases {
		if got := isNumeric(in); got != want {
			t.Errorf("isNumeric(%q) = %v, want %v", in, got, want)
		}
	}
}

// hgrmRow is one parsed data row of a .hgrm file.
type hgrmRow struct {
	value, pct float64
	count      int64
	inv        float64
}

// parseHGRM reads WriteHGRM output back the way HdrHistogram tools do:
// skip the header and blank lines, stop at the #[ footer, four columns.
func parseHGRM(t *testing.T, text string) (rows []hgrmRow, footer []string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "Value") || !strings.Contains(lines[0], "1/(1-Percentile)") || lines[1] != "" {
		t.Fatalf("bad header:\n%s", text)
	}
	for _, l := range lines[2:] {
		if strings.HasPrefix(l, "#[") {
			footer = append(footer, l)
			continue
		}
		if len(footer) > 0 {
			t.Fatalf("data after footer: %q", l)
		}
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("row %q has %d fields", l, len(f))
		}
		var r hgrmRow
		var err error
		if r.value, err = strconv.ParseFloat(f[0], 64); err != nil {
			t.Fatal(err)
		}
		if r.pct, err = strconv.ParseFloat(f[1], 64); err != nil {
			t.Fatal(err)
		}
		if r.count, err = strconv.ParseInt(f[2], 10, 64); err != nil {
			t.Fatal(err)
		}
		if r.inv, err = strconv.ParseFloat(f[3], 64); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows, footer
}

func TestWriteHGRM(t *testing.T) {
	cases := []struct {
		name      string
		ns        []int64
		big       bool
		wantMax   float64 // ms
		wantCount int64
	}{
		{name: "latencies", big: true},
		{name: "empty", wantCount: 0},
		{name: "single", ns: []int64{2_500_000}, wantMax: 2.5, wantCount: 1},
		{name: "zeros", ns: []int64{0, 0, 0}, wantMax: 0, wantCount: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := histOf(t, tc.ns...)
			if tc.big {
				h = latencyHist(t, 5, 50_000, 0.8, 0.5)
				tc.wantMax = float64(h.Max()) / 1e6
				tc.wantCount = h.TotalCount()
			}
			var b bytes.Buffer
			if err := WriteHGRM(&b, h, 1e6); err != nil {
				t.Fatal(err)
			}
			rows, footer := parseHGRM(t, b.String())
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			for i := 1; i < len(rows); i++ {
				if rows[i].pct < rows[i-1].pct || rows[i].value < rows[i-1].value || rows[i].count < rows[i-1].count {
					t.Fatalf("not monotone at row %d: %+v then %+v", i, rows[i-1], rows[i])
				}
			}
			last := rows[len(rows)-1]
			if last.pct != 1.0 || !math.IsInf(last.inv, 1) || last.count != tc.wantCount {
				t.Errorf("last row %+v, want percentile 1.0, inf, count %d", last, tc.wantCount)
			}
			if math.Abs(last.value-tc.wantMax) > 0.001 {
				t.Errorf("last value %v ms, want max %v", last.value, tc.wantMax)
			}
			if len(footer) != 3 || !strings.HasPrefix(footer[0], "#[Mean") || !strings.HasPrefix(footer[1], "#[Max") || !strings.HasPrefix(footer[2], "#[Buckets") {
				t.Errorf("footer %q", footer)
			}
			if tc.big && len(rows) < 50 {
				t.Errorf("only %d rows for a 50k-value histogram", len(rows))
			}
		})
	}
}

func TestWriteHGRMErrors(t *testing.T) {
	if err := WriteHGRM(&bytes.Buffer{}, nil, 1e6); err == nil {
		t.Error("nil histogram: want an error")
	}
	for _, r := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := WriteHGRM(&bytes.Buffer{}, histOf(t, 1), r); err == nil {
			t.Errorf("unit ratio %v: want an error", r)
		}
	}
	if err := WriteHGRM(failWriter{}, histOf(t, 1), 1); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("want the writer's error wrapped, got %v", err)
	}
}

func TestPercentiles(t *testing.T) {
	h := histOf(t)
	for v := int64(1); v <= 10_000; v++ {
		if err := h.RecordValue(v * 1000); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		got  map[string]float64
		want map[string]float64
		tol  float64 // relative
	}{
		{"uniform 1..10000 µs", Percentiles(h), map[string]float64{
			"p50": 5e6, "p90": 9e6, "p99": 9.9e6, "p99.9": 9.99e6, "p99.99": 1e7, "max": 1e7, "count": 10_000, "mean": 5.0005e6,
		}, 0.002},
		{"empty", Percentiles(histOf(t)), map[string]float64{
			"p50": 0, "p90": 0, "p99": 0, "p99.9": 0, "p99.99": 0, "max": 0, "count": 0, "mean": 0,
		}, 0},
		{"nil", Percentiles(nil), map[string]float64{
			"p50": 0, "p90": 0, "p99": 0, "p99.9": 0, "p99.99": 0, "max": 0, "count": 0, "mean": 0,
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != len(tc.want) {
				t.Errorf("keys %v, want %v", tc.got, tc.want)
			}
			for k, w := range tc.want {
				g, ok := tc.got[k]
				if !ok || math.Abs(g-w) > tc.tol*math.Abs(w) {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
				}
			}
		})
	}
}
