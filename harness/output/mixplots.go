package output

import (
	"errors"
	"fmt"
	"path/filepath"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/report"
)

// mixPlots draws, per run with a job mix, a percentile plot per split:
// e2e by kind (two or more kinds), the first attempts' queue-wait by queue,
// e2e of the noisy tenant against the quiet ones, and the first attempts'
// queue-wait before, during and after the failure windows. The histograms
// are the ledger's split (engine.Result.Mix, two significant digits). With
// queues, a time plot of each queue's longest first wait per second.
func (pl *plots) mixPlots(runs []summary.RunSummary, prefix, cond string) error {
	var errs []error
	for _, r := range runs {
		groups := pl.mixByRun[r.ID]
		if len(groups) == 0 {
			continue
		}
		for _, p := range mixSplits(r.Config) {
			var series []report.LatencySeries
			for i, gi := range p.groups {
				if h := pick(groups[gi], p.e2e); h != nil && h.TotalCount() > 0 {
					series = append(series, report.LatencySeries{Label: p.labels[i], Hist: h})
				}
			}
			if len(series) < 2 {
				continue
			}
			path := filepath.Join(pl.dir, prefix+r.ID+"-"+p.name)
			if err := pl.keep(path)(report.PercentilePlot(path, pl.title(fmt.Sprintf("%s: %s", r.ID, p.title)), cond, series)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, r := range runs {
		if r.Mix == nil || len(r.Mix.Queues) == 0 {
			continue
		}
		var lines []report.Line
		for _, q := range r.Mix.Queues {
			l := report.Line{Label: q.Name}
			for sec, ms := range q.WaitMaxMsBySecond {
				if ms >= 0 {
					l.X, l.Y = append(l.X, float64(sec)), append(l.Y, ms)
				}
			}
			lines = append(lines, l)
		}
		path := filepath.Join(pl.dir, prefix+r.ID+"-queue-wait")
		title := pl.title(fmt.Sprintf("%s: longest first-attempt wait by queue, per second (%s)", r.ID, r.Mix.QueuePolicy))
		if err := pl.keep(path)(report.TimePlot(path, title, cond, "wait (ms)", lines, nil)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func pick(g ledger.Group, e2e bool) *hdr.Histogram {
	if e2e {
		return g.E2E
	}
	return g.QueueWait
}

// mixSplit is one plot of a run's split: its groups (indexes into the
// split) and their labels, and whether it draws e2e or the first wait.
type mixSplit struct {
	name, title string
	e2e         bool
	groups      []int
	labels      []string
}

func mixSplits(c conditions.Config) []mixSplit {
	m := c.MixLayout()
	var out []mixSplit
	if m.Kinds > 1 {
		s := mixSplit{name: "kinds", title: "end-to-end latency by job kind", e2e: true}
		for i, k := range c.Jobs {
			s.groups, s.labels = append(s.groups, i), append(s.labels, k.Name)
		}
		out = append(out, s)
	}
	if m.Queues > 0 {
		s := mixSplit{name: "queues", title: "first attempts' queue wait by queue"}
		for i, q := range c.Store.Queues {
			s.groups, s.labels = append(s.groups, m.QueueGroup(i)), append(s.labels, q.Name)
		}
		out = append(out, s)
	}
	if m.Tenants > 0 {
		out = append(out, mixSplit{name: "tenants", title: "end-to-end latency, noisy tenant t0 against the others", e2e: true,
			groups: []int{m.TenantGroup(0), m.QuietGroup()}, labels: []string{"noisy t0", "quiet (pooled)"}})
	}
	if m.Storm {
		out = append(out, mixSplit{name: "storm", title: "first attempts' queue wait around the failure windows",
			groups: []int{m.StormGroup(0), m.StormGroup(1), m.StormGroup(2)}, labels: []string{"before", "during", "after"}})
	}
	return out
}
