package page

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/stats"
)

// verdictView is the top of the page: what a reader needs before any
// number: did the plan finish, did its thresholds pass, did the ledger
// find a lost, unexpected or early job, and (given a baseline) what
// regressed.
type verdictView struct {
	Status, StatusClass string
	Thresholds          string
	ThresholdsClass     string
	Crossed             []string
	Ledger, LedgerClass string
	LedgerBad           []string
	Health, HealthClass string
	HealthBad           []string
	Compare             string
	CompareClass        string
	Regressions         []string
}

func verdictOf(s *verdict.Set, status string, cmp *compareView) verdictView {
	v := verdictView{Status: status, StatusClass: "good"}
	if status != "complete" {
		v.StatusClass = "bad"
	}
	v.Thresholds, v.ThresholdsClass, v.Crossed = thresholdsText(s.ThresholdResults)
	runs, dup := 0, int64(0)
	for _, r := range s.Runs {
		if r.Health.IsSuspect() {
			v.HealthBad = append(v.HealthBad, r.ID+": "+r.Health.Text())
		}
		if r.Calibration || r.Status == summary.StatusNotApplicable || !r.Measured() {
			continue
		}
		runs++
		dup += r.Ledger.Duplicated
		if why := r.Incorrect(); why != "" {
			v.LedgerBad = append(v.LedgerBad, r.ID+": "+why)
		}
	}
	v.Health, v.HealthClass = healthText(s, v.HealthBad)
	if len(v.HealthBad) > 0 && len(s.ThresholdResults) > 0 {
		v.Thresholds += "; decided on suspect runs (health below): the machine may have set them"
	}
	switch {
	case runs == 0:
		v.Ledger, v.LedgerClass = "nothing measured: no run of a job store finished its measured window", "bad"
	case len(v.LedgerBad) > 0:
		v.Ledger, v.LedgerClass = fmt.Sprintf("FAILED in %d of %d runs", len(v.LedgerBad), runs), "bad"
	default:
		v.Ledger, v.LedgerClass = fmt.Sprintf("correct in all %d runs: no job lost, unexpected or started early", runs), "good"
		if dup > 0 {
			v.Ledger += fmt.Sprintf(" (%d duplicated executions: at-least-once)", dup)
		}
	}
	if cmp != nil {
		v.Compare, v.CompareClass = cmp.Headline, "good"
		if len(cmp.Regressions) > 0 {
			v.CompareClass = "bad"
		}
		v.Regressions = cmp.Regressions
	}
	return v
}

// thresholdsText sums the thresholds' results up: the text, its class and
// the crossed ones' lines.
func thresholdsText(ts []summary.ThresholdResult) (string, string, []string) {
	if len(ts) == 0 {
		return "none in this scenario", "none", nil
	}
	n := map[string]int{}
	var crossed, passed []string
	for _, t := range ts {
		n[t.Status]++
		if t.Status == "passed" {
			passed = append(passed, t.Threshold)
		}
		if t.Status == "crossed" || t.Status == "unchecked" {
			line := t.Threshold + ": " + t.Status
			if len(t.Crossings) > 0 {
				line += " (" + strings.Join(t.Crossings, "; ") + ")"
			}
			crossed = append(crossed, line)
		}
	}
	var parts []string
	for _, st := range []string{"passed", "crossed", "unchecked", "baseline"} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	class := "good"
	if n["crossed"]+n["unchecked"] > 0 {
		class = "bad"
	}
	text := strings.Join(parts, ", ")
	if len(passed) > 0 {
		text += " (passed: " + strings.Join(passed, "; ") + ")"
	}
	return text, class, crossed
}

// headlineRow is one backend's headline numbers in a cell.
type headlineRow struct {
	Backend, Kind, Done, E2E50, E2E99, CPU, Cmds, Lost, Dup, XFloor, XBest string
	// WaitXFloor is queue-wait p50 / p99 over the floor's (medians over
	// the repeats; "-" without a floor).
	WaitXFloor string
	// XPeers are jobs/s as a ratio to each peer of the cell (cellView.Peers'
	// order), from the medians over the repeats.
	XPeers []string
	Bad    bool
}

// peersOf lists the peers of a cell (registry kind "peer": asynq, the
// drivers' job systems), in the cell's order.
func peersOf(gs []stats.Group) []stats.Group {
	var out []stats.Group
	for _, g := range gs {
		if g.Kind == "peer" {
			out = append(out, g)
		}
	}
	return out
}

// headline gives each backend of cell ci its medians over the repeats, its
// ratios to the floor and the best strategy (median over the repeats), and
// its jobs/s over each peer's (medians).
func headline(s *verdict.Set, ci int, gs []stats.Group) []headlineRow {
	var out []headlineRow
	peers := peersOf(gs)
	for _, g := range gs {
		row := headlineRow{Backend: g.Backend, Done: med(g, "throughput"), E2E50: med(g, "e2e.p50"),
			E2E99: med(g, "e2e.p99"), CPU: med(g, "redis_cpu_us_per_job"), Cmds: med(g, "cmds_per_job")}
		var lost, dup int64
		var xf, xb, w50, w99 []float64
		for _, r := range s.Runs {
			if r.Cell != ci || r.Label != g.Backend || r.Client != g.Client || r.Calibration {
				continue
			}
			row.Kind = r.Kind
			lost += r.Ledger.Lost
			dup += r.Ledger.Duplicated
			row.Bad = row.Bad || r.Incorrect() != ""
			if x, ok := r.Ratios["floor"]; ok && x.Throughput > 0 {
				xf = append(xf, x.Throughput)
			}
			if x, ok := r.Ratios["floor"]; ok && x.QueueWaitP50 > 0 && x.QueueWaitP99 > 0 {
				w50, w99 = append(w50, x.QueueWaitP50), append(w99, x.QueueWaitP99)
			}
			if x, ok := r.Ratios["best strategy"]; ok && x.Throughput > 0 {
				xb = append(xb, x.Throughput)
			}
		}
		row.Lost, row.Dup = fmt.Sprint(lost), fmt.Sprint(dup)
		row.XFloor, row.XBest = ratioText(xf), ratioText(xb)
		row.WaitXFloor = "-"
		if len(w50) > 0 {
			row.WaitXFloor = ratioText(w50) + " / " + ratioText(w99)
		}
		offered := offeredIn(s, ci)
		for _, p := range peers {
			mine, ok1 := g.Metric("throughput")
			theirs, ok2 := p.Metric("throughput")
			x := "-"
			if ok1 && ok2 && theirs.Median > 0 {
				// Up to the offered rate on both sides: catching up is no merit.
				x = fmt.Sprintf("%.2fx", capAt(mine.Median, offered)/capAt(theirs.Median, offered))
			}
			row.XPeers = append(row.XPeers, x)
		}
		out = append(out, row)
	}
	return out
}

func med(g stats.Group, name string) string {
	m, err := verdict.Lookup(name)
	st, has := g.Metric(name)
	if err != nil || !has {
		return "-"
	}
	return m.Format(st.Median)
}

func ratioText(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	sort.Float64s(xs)
	return fmt.Sprintf("%.2fx", xs[len(xs)/2])
}

// noInterval says why a cell's statistics carry no interval: too few
// repeats for a distribution-free 95% interval.
func noInterval(gs []stats.Group) string {
	most := 0
	for _, g := range gs {
		most = max(most, len(g.Runs))
		for _, st := range g.Metrics {
			if st.CI != nil {
				return ""
			}
		}
	}
	return fmt.Sprintf("No interval: %d repeat(s) per backend; a distribution-free 95%% confidence interval of the median needs at least 6 (scenario field repeats). The values are single medians.", most)
}

// healthText sums up the runs' measurement health (package health).
func healthText(s *verdict.Set, bad []string) (string, string) {
	judged := 0
	for _, r := range s.Runs {
		if r.Health != nil {
			judged++
		}
	}
	switch {
	case judged == 0:
		return "not judged (a file written before health was)", ""
	case len(bad) > 0:
		return fmt.Sprintf("SUSPECT in %d of %d runs: the machine, not the store, may have set their numbers", len(bad), judged), "bad"
	}
	return fmt.Sprintf("healthy in all %d runs: the harness got the CPU it needed and kept its plan", judged), "good"
}

// offeredIn is the offered rate of cell ci's open loop (0: closed loop).
func offeredIn(s *verdict.Set, ci int) float64 {
	for _, r := range s.Runs {
		if r.Cell == ci && !r.Calibration && r.Offered > 0 {
			return r.Offered
		}
	}
	return 0
}

func capAt(v, offered float64) float64 {
	if offered > 0 {
		return min(v, offered)
	}
	return v
}

// headlineCols says which of the headline's ratio columns a cell has
// figures in: a column that is "-" in every row is left out.
type headlineCols struct{ XFloor, Wait, XBest bool }

func colsOf(rows []headlineRow) headlineCols {
	var c headlineCols
	for _, r := range rows {
		c.XFloor = c.XFloor || r.XFloor != "-"
		c.Wait = c.Wait || r.WaitXFloor != "-"
		c.XBest = c.XBest || r.XBest != "-"
	}
	return c
}
