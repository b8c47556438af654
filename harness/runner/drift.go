package runner

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/hist"
	"github.com/aebench/aebench/harness/summary"
)

// driftResults cuts the measured window into c.Drift.Windows windows and
// judges the drift of memory per job held, Redis CPU per job and e2e p99
// (nil without drift.windows).
func driftResults(c conditions.Config, res *engine.Result, baseline int64) *summary.Drift {
	w := c.DriftWindow()
	if w <= 0 {
		return nil
	}
	warm, ws := c.Warmup.Seconds(), w.Seconds()
	retained := int(math.Ceil(c.Store.Retention.Seconds()))
	d := &summary.Drift{WindowS: ws, Windows: make([]summary.DriftWindow, c.Drift.Windows)}
	acc := make([]driftAcc, c.Drift.Windows)
	var done []int64 // completions per second so far, for the jobs retained
	for _, p := range res.Series {
		done = append(done, p.Completed)
		at := float64(p.Second) - warm
		if at <= 0 || p.Phase == "drain" {
			continue
		}
		k := min(int((at-0.5)/ws), c.Drift.Windows-1)
		finished := int64(0)
		for i := max(len(done)-retained, 0); i < len(done); i++ {
			finished += done[i]
		}
		acc[k].add(p, p.Backlog+p.InFlight+finished, baseline)
	}
	for k := range d.Windows {
		d.Windows[k] = acc[k].window(float64(k)*ws, float64(k+1)*ws)
		if k < len(res.WindowHists) {
			set := res.WindowHists[k]
			d.Windows[k].E2EP99Ms = p99Ms(set[hist.TagE2E])
			d.Windows[k].QueueWaitP99Ms = p99Ms(set[hist.TagQueueWait])
		}
	}
	for _, m := range []struct {
		name string
		get  func(summary.DriftWindow) float64
	}{
		{"memory per job held", func(x summary.DriftWindow) float64 { return x.MemPerJobBytes }},
		{"redis cpu per job", func(x summary.DriftWindow) float64 { return x.RedisCPUPerJobUs }},
		{"e2e p99", func(x summary.DriftWindow) float64 { return x.E2EP99Ms }},
	} {
		vs := make([]float64, len(d.Windows))
		for i, x := range d.Windows {
			vs[i] = m.get(x)
		}
		d.Verdicts = append(d.Verdicts, driftVerdict(m.name, vs))
	}
	return d
}

// driftAcc sums one window's seconds.
type driftAcc struct {
	n, mem                int
	used, held, perJob, f float64
	cpu                   float64
	cmds, completed       int64
}

func (a *driftAcc) add(p engine.SeriesPoint, held, baseline int64) {
	a.n++
	a.cpu += p.RedisCPUPercent / 100
	a.cmds += p.RedisCommands
	a.completed += p.Completed
	if p.RedisUsedBytes <= 0 {
		return
	}
	a.mem++
	a.used += float64(p.RedisUsedBytes)
	a.held += float64(held)
	if held > 0 {
		a.perJob += float64(max(p.RedisUsedBytes-baseline, 0)) / float64(held)
	}
	a.f += float64(p.RedisRSSBytes) / float64(p.RedisUsedBytes)
}

func (a *driftAcc) window(from, to float64) summary.DriftWindow {
	w := summary.DriftWindow{FromS: from, ToS: to, Completed: a.completed}
	if a.mem > 0 {
		m := float64(a.mem)
		w.UsedBytes, w.HeldJobs, w.MemPerJobBytes, w.Fragmentation = a.used/m, a.held/m, a.perJob/m, a.f/m
	}
	if a.completed > 0 {
		w.RedisCPUPerJobUs = a.cpu * 1e6 / float64(a.completed)
		w.CommandsPerJob = float64(a.cmds) / float64(a.completed)
	}
	return w
}

func p99Ms(h *hdr.Histogram) float64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(99)) / 1e6
}

// driftVerdict compares the last window's value with the first: the ratio,
// and the 95% interval of the ratio the least-squares trend across the
// windows projects from the first window to the last (a t interval of
// the slope). Drifts: the ratio above summary.DriftThreshold and the
// interval above 1; holds: the interval under the threshold.
func driftVerdict(name string, vs []float64) summary.DriftVerdict {
	v := summary.DriftVerdict{Metric: name, Word: "unclear"}
	n := len(vs)
	if n < 3 || vs[0] <= 0 {
		v.Word = "not measured"
		return v
	}
	v.First, v.Last = vs[0], vs[n-1]
	v.Ratio = v.Last / v.First
	slope, se := leastSquares(vs)
	span := float64(n-1) / v.First
	t := tCrit95(n - 2)
	// A ratio is never below 0: the interval is clamped there.
	v.Lo, v.Hi = max(1+(slope-t*se)*span, 0), max(1+(slope+t*se)*span, 0)
	switch {
	case v.Ratio > summary.DriftThreshold && v.Lo > 1:
		v.Word = "drifts"
	case v.Hi < summary.DriftThreshold:
		v.Word = "holds"
	}
	return v
}

// leastSquares is the slope of vs against 0..n-1 and its standard error.
func leastSquares(vs []float64) (slope, se float64) {
	n := float64(len(vs))
	var sx, sy, sxx, sxy float64
	for i, y := range vs {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	den := n*sxx - sx*sx
	slope = (n*sxy - sx*sy) / den
	icept := (sy - slope*sx) / n
	var rss float64
	for i, y := range vs {
		r := y - icept - slope*float64(i)
		rss += r * r
	}
	mx := sx / n
	sxxc := sxx - n*mx*mx
	if len(vs) > 2 && sxxc > 0 {
		se = math.Sqrt(rss / (n - 2) / sxxc)
	}
	return slope, se
}

// tCrit95 is the two-sided 95% quantile of Student's t with dof degrees
// of freedom (a table to 30, then the normal's 1.96 with a small margin).
func tCrit95(dof int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case dof < 1:
		return math.Inf(1)
	case dof <= len(table):
		return table[dof-1]
	}
	return 2.0
}
