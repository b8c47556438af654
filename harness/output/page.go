package output

import (
	"fmt"

	"github.com/aebench/aebench/harness/page"
	"github.com/aebench/aebench/harness/summary"
)

// reportPage writes report.html (package page) from summary.json once the
// plan is done: the page a person opens. It is final (it states the
// plan's status as complete, ahead of the complete flag that follows it)
// when every planned run ran and none hit an infrastructure error.
type reportPage struct{ base }

func newPage(string) (Output, error) { return &reportPage{}, nil }

func (p *reportPage) PlanDone(sum *summary.Summary) error {
	final := sum.Complete
	for _, r := range sum.Runs {
		if r.Status == summary.StatusError {
			final = false
		}
	}
	write := page.WriteDir
	if final {
		write = page.WriteFinal
	}
	if err := write(p.dir); err != nil {
		return fmt.Errorf("%s: %w", page.FileName, err)
	}
	return nil
}
