package output

import (
	"slices"
	"testing"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// The plan rotates the backends' order from round to round; a cell's
// tables and plots list its runs round by round in the written order.
func TestCellRunsWrittenOrder(t *testing.T) {
	s, err := scenario.ParseScenario("r.yaml", []byte("repeats: 2\ncalibration: off\nbackends: [zset, null, stream]\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum := &summary.Summary{}
	var ran []string
	for _, spec := range s.Runs() {
		sum.Runs = append(sum.Runs, summary.RunSummary{ID: spec.ID, Label: spec.Config.Backend.Label, Cell: spec.Cell,
			Repeat: spec.Repeat, Status: summary.StatusOK})
		ran = append(ran, spec.ID)
	}
	var got []string
	for _, r := range (&planView{s: s, sum: sum}).cellRuns(1) {
		got = append(got, r.ID)
	}
	want := []string{"r1-zset", "r1-null", "r1-stream", "r2-zset", "r2-null", "r2-stream"}
	if !slices.Equal(got, want) {
		t.Errorf("cell runs %v (ran %v), want %v", got, ran, want)
	}
	if slices.Equal(ran, want) {
		t.Errorf("the plan ran %v: no rotation to undo", ran)
	}
}
