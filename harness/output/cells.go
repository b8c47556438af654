package output

import (
	"fmt"
	"sort"

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

// cellRuns returns the runs of a cell that have numbers, calibration
// excluded, round by round and in each round in the cell's written order
// of backends: the plan rotates that order from round to round
// (scenario.Scenario.Runs), the tables and plots keep it.
func (v *planView) cellRuns(cell int) []summary.RunSummary {
	var out []summary.RunSummary
	for _, r := range v.sum.Runs {
		if r.Cell == cell && !r.Calibration && r.Status != summary.StatusError && r.Status != summary.StatusNotApplicable {
			out = append(out, r)
		}
	}
	place := map[string]int{}
	for _, c := range v.s.Cells {
		if c.Index == cell {
			for i, b := range c.Backends {
				place[b.Label] = i
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Repeat != out[j].Repeat {
			return out[i].Repeat < out[j].Repeat
		}
		return place[out[i].Label] < place[out[j].Label]
	})
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
