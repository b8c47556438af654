package report_test

import (
	"bytes"
	"fmt"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/report"
)

// An .hgrm file is HdrHistogram's percentile distribution text; with a
// unit ratio of 1e6, values recorded in ns print in ms.
func ExampleWriteHGRM() {
	h := hdrhistogram.New(1, 3_600_000_000_000, 3)
	for _, ns := range []int64{1_000_000, 2_000_000, 3_000_000, 4_000_000} {
		_ = h.RecordValue(ns)
	}
	var b bytes.Buffer
	_ = report.WriteHGRM(&b, h, 1e6)
	lines := strings.Split(b.String(), "\n")
	fmt.Println(strings.Join(lines[:4], "\n"))
	// Output:
	// Value     Percentile TotalCount 1/(1-Percentile)
	//
	//        1.000 0.000000000000          1           1.00
	//        1.000 0.100000000000          1           1.11
}
