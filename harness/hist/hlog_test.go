package hist_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/hist"
)

// TestLogWriterAsLibrary holds LogWriter's interval lines to
// hdrhistogram-go's: the library's reader decodes each to the histogram
// written, and the line's tag, times and max are the library writer's.
func TestLogWriterAsLibrary(t *testing.T) {
	cases := []struct {
		name   string
		tag    string
		values map[int64]int64 // value (ns) -> count
	}{
		{"one value", "zset.e2e", map[int64]int64{1500: 1}},
		{"spread with zero runs", "dual.queue_wait", map[int64]int64{1000: 3, 52_000: 700, 4_100_000: 120, int64(time.Hour): 1}},
		{"the range's ends", "x.claim", map[int64]int64{0: 2, hist.Highest: 1}},
		{"a count of nine bytes", "x.e2e", map[int64]int64{80_000: 1 << 60}},
		{"untagged", "", map[int64]int64{2_000_000: 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hist.New()
			for v, n := range c.values {
				if err := h.RecordValues(v, n); err != nil {
					t.Fatal(err)
				}
			}
			h.SetTag(c.tag)
			h.SetStartTimeMs(1_700_000_003_250)
			h.SetEndTimeMs(1_700_000_004_250)
			var ours, theirs bytes.Buffer
			lw := hist.NewLogWriter(&ours)
			lw.SetBaseTime(1_700_000_000_000)
			if err := lw.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
			ref := hdr.NewHistogramLogWriter(&theirs)
			ref.SetBaseTime(1_700_000_000_000)
			if err := ref.OutputIntervalHistogram(h); err != nil {
				t.Fatal(err)
			}
			line, refLine := ours.String(), theirs.String()
			got, err := hdr.NewHistogramLogReader(&ours).NextIntervalHistogram()
			if err != nil || got == nil {
				t.Fatalf("library reader on %q: %v", line, err)
			}
			if !got.Equals(h) || got.TotalCount() != h.TotalCount() || got.Max() != h.Max() {
				t.Errorf("decoded %d values, max %d; wrote %d, max %d", got.TotalCount(), got.Max(), h.TotalCount(), h.Max())
			}
			fields := func(line string) string { return line[:strings.LastIndex(line, ",")] }
			if fields(line) != fields(refLine) {
				t.Errorf("line fields %q, library's %q", fields(line), fields(refLine))
			}
		})
	}
}

// TestLogWriterRefusesBadTag: a tag with a separator would break the line.
func TestLogWriterRefusesBadTag(t *testing.T) {
	h := hist.New()
	_ = h.RecordValue(5000)
	h.SetTag("a,b")
	if err := hist.NewLogWriter(&bytes.Buffer{}).OutputIntervalHistogram(h); err == nil {
		t.Fatal("a tag with a comma was written")
	}
}

// BenchmarkLogWriter is one interval line of a second's e2e histogram at
// 1000 jobs/s; the library's writer made a new zlib writer for each.
func BenchmarkLogWriter(b *testing.B) {
	h := hist.New()
	for i := range 1000 {
		_ = h.RecordValue(int64(50_000 + i*700))
	}
	h.SetTag("x.e2e")
	for _, w := range []struct {
		name string
		out  func(*hdr.Histogram) error
	}{
		{"ours", hist.NewLogWriter(&bytes.Buffer{}).OutputIntervalHistogram},
		{"library", hdr.NewHistogramLogWriter(&bytes.Buffer{}).OutputIntervalHistogram},
	} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := w.out(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
