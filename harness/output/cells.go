package output

import (
	"fmt"

	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
)

// planView is what the outputs of a plan's end read: the scenario, the
// summary PlanDone hands over. The plots and the terminal's tables embed
// it.
type planView struct {
	s   *scenario.Scenario
	sum *summary.Summary
}

// cellRuns returns the runs of a cell that have numbers, calibration excluded.
func (v *planView) cellRuns(cell int) []summary.RunSummary {
	var out []summary.RunSummary
	for _, r := range v.sum.Runs {
		if r.Cell == cell && !r.Calibration && r.Status != summary.StatusError && r.Status != summary.StatusNotApplicable {
			out = append(out, r)
		}
	}
	return out
}

func (v *planView) cellPrefix(c scenario.Cell) string {
	if len(v.s.Cells) > 1 {
		return fmt.Sprintf("c%d-", c.Index)
	}
	return ""
}

func cellConditions(runs []summary.RunSummary) string {
	for _, r := range runs {
		if r.Redis != nil {
			return r.Conditions
		}
	}
	if len(runs) > 0 {
		return runs[0].Conditions
	}
	return ""
}

func cellShortConditions(runs []summary.RunSummary) string {
	for _, r := range runs {
		if r.Redis != nil {
			return r.Config.ShortConditions(r.Redis.Version)
		}
	}
	if len(runs) > 0 {
		return runs[0].Config.ShortConditions("")
	}
	return ""
}
