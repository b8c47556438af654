package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// WriteHGRM writes h's percentile distribution in the text format that
// HdrHistogram tools read (the .hgrm files of wrk2 and Java's
// outputPercentileDistribution, which the HdrHistogram plotter and
// hdr-plot load):
//
//	       Value     Percentile TotalCount 1/(1-Percentile)
//
//	       0.101 0.000000000000          1           1.00
//	...
//	      12.722 1.000000000000         10            inf
//	#[Mean    =        2.491, StdDeviation   =        3.558]
//	#[Max     =       12.722, Total count    =           10]
//	#[Buckets =           15, SubBuckets     =         2048]
//
// Values are divided by unitRatio (1e6 turns nanoseconds into ms). Rows step
// 5 ticks per half-distance to 100%, as Java's default does; the percentile
// column has 12 decimals like Java's, so the deep tail of a large run does
// not round to 1.0 early. The last row's 1/(1-Percentile) is "inf", as the C
// and Go implementations print it. An empty histogram gives a single row at
// percentile 1.0 with count 0.
func WriteHGRM(w io.Writer, h *hdrhistogram.Histogram, unitRatio float64) error {
	if h == nil {
		return errors.New("report: hgrm: nil histogram")
	}
	if !(unitRatio > 0) || math.IsInf(unitRatio, 0) {
		return fmt.Errorf("report: hgrm: unit ratio must be a positive number, got %v", unitRatio)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	for _, b := range h.CumulativeDistributionWithTicks(ticksPerHalfDistance) {
		q := b.Quantile / 100
		inv := fmt.Sprintf("%14.2f", 1/(1-q))
		if q >= 1 {
			inv = fmt.Sprintf("%14s", "inf")
		}
		fmt.Fprintf(bw, "%12.3f %14.12f %10d %s\n", float64(b.ValueAt)/unitRatio, q, b.Count, inv)
	}
	footer, err := hgrmFooter(h, unitRatio)
	if err != nil {
		return err
	}
	bw.WriteString(footer)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write hgrm: %w", err)
	}
	return nil
}

// hgrmFooter returns the #[Mean ...], #[Max ...], #[Buckets ...] lines. They
// are taken from the library's own PercentilesPrint because the bucket and
// sub-bucket counts are not exported, and recomputing them from the
// histogram's geometry would silently drift if the library changes it.
func hgrmFooter(h *hdrhistogram.Histogram, unitRatio float64) (string, error) {
	var buf bytes.Buffer
	// One tick per half-distance keeps this throw-away table short.
	if _, err := h.PercentilesPrint(&buf, 1, unitRatio); err != nil {
		return "", fmt.Errorf("report: hgrm footer: %w", err)
	}
	var footer strings.Builder
	for line := range strings.Lines(buf.String()) {
		if strings.HasPrefix(line, "#[") {
			footer.WriteString(line)
		}
	}
	if footer.Len() == 0 {
		return "", errors.New("report: hgrm footer: library printed no #[ lines")
	}
	return footer.String(), nil
}
