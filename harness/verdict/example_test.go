package verdict_test

import (
	"fmt"

	"github.com/aebench/aebench/harness/verdict"
)

// A threshold is a k6-style expression; latency limits are stored in ns.
func ExampleParseThreshold() {
	t, err := verdict.ParseThreshold("e2e.p99 < 20ms")
	fmt.Println(t.Metric.Name, t.Op, t.Limit, err)
	_, err = verdict.ParseThreshold("e2e.p99 < fast")
	fmt.Println(err != nil)
	// Output:
	// e2e.p99 < 2e+07 <nil>
	// true
}
