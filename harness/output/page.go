package output

import (
	"fmt"
	"path/filepath"

	"github.com/aebench/aebench/harness/page"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// reportPage writes report.html (package page) from the summary in memory
// once the plan is done, with the plots the plots output drew: the page a
// person opens. It is final (it states the plan's status as complete,
// ahead of the complete flag that follows it) when every planned run ran
// and none hit an infrastructure error.
type reportPage struct {
	base
	// plots is the plan's plots output (nil with --no-plots), set by Open.
	plots interface{ Drawn() []page.Plot }
}

func newPage(string) (Output, error) { return &reportPage{}, nil }

func (p *reportPage) PlanDone(sum *summary.Summary) error {
	final := sum.Complete
	for _, r := range sum.Runs {
		if r.Status == summary.StatusError {
			final = false
		}
	}
	s, err := verdict.FromPlan(sum, p.dir, final)
	if err != nil {
		return fmt.Errorf("%s: %w", page.FileName, err)
	}
	var plots []page.Plot
	if p.plots != nil {
		plots = p.plots.Drawn()
	}
	if err := page.WriteFile(filepath.Join(p.dir, page.FileName), s, nil, plots); err != nil {
		return fmt.Errorf("%s: %w", page.FileName, err)
	}
	return nil
}
