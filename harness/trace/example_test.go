package trace_test

import (
	"fmt"

	"github.com/aebench/aebench/harness/trace"
)

// A trace is CSV with a header (or JSON lines): offset_s is required;
// delay_s, payload_bytes, kind and id are optional.
func ExampleParse() {
	data := "offset_s,delay_s,kind\n0.10,,email\n0.40,2.5,report\n1.20,,email\n"
	tr, err := trace.Parse("yesterday.csv", []byte(data), 256)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(tr.Arrivals), "arrivals over", tr.Span(), "per second:", tr.PerSecond())
	_, err = trace.Parse("bad.csv", []byte("offset_s\n1.0\n0.5\n"), 256)
	fmt.Println(err)
	// Output:
	// 3 arrivals over 2s per second: [2 1]
	// bad.csv:3: offset_s: 0.500 is before the line above's 1.000: offsets must not decrease
}
