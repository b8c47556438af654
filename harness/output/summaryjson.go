package output

import (
	"path/filepath"

	"github.com/aebench/aebench/harness/summary"
)

// summaryJSON writes summary.json at the plan's end, once package analysis
// has finished the summary and the plots have noted any failure in it: the
// record every later reader starts from (the page, aebench compare and
// claims). The runner also writes it after every run, so that a failure
// or Ctrl-C later never loses what was measured.
type summaryJSON struct{ base }

func newSummaryJSON(string) (Output, error) { return &summaryJSON{}, nil }

func (s *summaryJSON) PlanDone(sum *summary.Summary) error {
	return summary.Write(filepath.Join(s.dir, "summary.json"), sum)
}
