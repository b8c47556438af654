package hist_test

import (
	"fmt"
	"time"

	"github.com/aebench/aebench/harness/hist"
)

// A Recorder records on the wall clock in the run's units (here a
// simulated run at speed 60), and the collector drains it into a Set.
func ExampleRecorder() {
	r := hist.NewRecorder(60)
	r.Record(hist.TagE2E, 2*time.Millisecond)
	r.Record(hist.TagE2E, 4*time.Millisecond)
	var s hist.Set
	r.DrainInto(&s)
	h := s[hist.TagE2E]
	fmt.Println(hist.TagE2E, h.TotalCount(), time.Duration(h.Max()).Round(time.Millisecond))
	// Output: e2e 2 240ms
}
