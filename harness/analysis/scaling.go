package analysis

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/stats"
)

// scalingCurve builds the curve of a sweep over redis.masters: per backend
// line and cluster size, the medians, the efficiency against linear from
// the smallest size, a capacity projection from the measured CPU per job,
// and the resource that bound the point. nil when masters is not swept.
//
// The projection is a model, printed as one: a master's throughput is
// bounded by one core (1e6 / its CPU µs per job, the busiest master
// binding), and clients on hosts of their own need ClientMicros a job. On
// a machine with fewer cores than masters plus clients the measured curve
// is bound by the machine; the projection says what the cluster would take
// with a core per master.
func ScalingCurve(sum *summary.Summary) []summary.ScalingPoint {
	if sum.Statistics == nil || !slices.Contains(SweptFields(sum.Statistics.Groups), "redis.masters") {
		return nil
	}
	runs := map[string]*summary.RunSummary{}
	for i := range sum.Runs {
		runs[sum.Runs[i].ID] = &sum.Runs[i]
	}
	var lines Lines[summary.ScalingPoint]
	for _, g := range sum.Statistics.Groups {
		if p, line, ok := scalingPoint(g, runs, sum.Environment.CPUs); ok {
			lines.Add(line, p)
		}
	}
	var out []summary.ScalingPoint
	for _, pts := range lines.Sorted(func(a, b summary.ScalingPoint) bool { return a.Masters < b.Masters }) {
		m0, t0, p0 := float64(pts[0].Masters), pts[0].Throughput, pts[0].ProjectedRedis
		for i := range pts {
			scale := float64(pts[i].Masters) / m0
			if t0 > 0 {
				pts[i].Efficiency = pts[i].Throughput / (t0 * scale)
			}
			if p0 > 0 {
				pts[i].ProjectedEfficiency = pts[i].ProjectedRedis / (p0 * scale)
			}
		}
		out = append(out, pts...)
	}
	return out
}

// scalingPoint reads one statistics group: its medians, and its config
// from its first run. line names the curve it belongs to (the backend and
// any other varied field).
func scalingPoint(g stats.Group, runs map[string]*summary.RunSummary, cpus int) (summary.ScalingPoint, string, bool) {
	p := summary.ScalingPoint{Backend: g.Backend, CPUs: cpus}
	val, line, _ := SweepLine(g, "redis.masters")
	p.Masters, _ = strconv.Atoi(val)
	if p.Masters == 0 || len(g.Runs) == 0 || runs[g.Runs[0]] == nil {
		return p, line, false
	}
	median := func(name string) float64 {
		st, _ := g.Metric(name)
		return st.Median
	}
	p.Throughput = median("throughput")
	p.RedisCPUMicros = median("redis_cpu_us_per_job")
	p.BusiestMicros = median("busiest_master_cpu_us_per_job")
	p.ClientMicros = median("client_cpu_us_per_job")
	if st, ok := g.Metric("lost"); ok && len(st.Values) > 0 {
		p.Lost = slices.Max(st.Values)
	}
	cfg := runs[g.Runs[0]].Config
	p.Shards = max(cfg.Store.Shards, 1)
	p.BusiestPercent = 100 * p.Throughput * p.BusiestMicros / 1e6
	p.CoresBusy = p.Throughput * (p.RedisCPUMicros + p.ClientMicros) / 1e6
	if p.BusiestMicros > 0 {
		p.ProjectedRedis = 1e6 / p.BusiestMicros
		p.ClientCores = p.ProjectedRedis * p.ClientMicros / 1e6
	}
	if per := p.RedisCPUMicros + p.ClientMicros; per > 0 && cpus > 0 {
		p.ProjectedHere = float64(cpus) * 1e6 / per
	}
	open := cfg.Producers.Mode == "open"
	switch {
	case open && p.Throughput >= KeepPace*cfg.Producers.Rate:
		p.Bound = fmt.Sprintf("offered load (%g jobs/s)", cfg.Producers.Rate)
	case p.BusiestPercent >= 100*busyCore:
		p.Bound = fmt.Sprintf("one master's core (busiest %.0f%%)", p.BusiestPercent)
	case cpus > 0 && p.CoresBusy >= busyMachine*float64(cpus):
		p.Bound = fmt.Sprintf("this machine's CPUs (%.1f of %d busy)", p.CoresBusy, cpus)
	default:
		p.Bound = fmt.Sprintf("round trips, not CPU (%.1f of %d cores busy, busiest master %.0f%%)", p.CoresBusy, cpus, p.BusiestPercent)
	}
	return p, line, true
}

// The thresholds that name a point's bound. A master at busyCore of one
// core is saturated (Redis runs commands on one thread); the machine is
// the bound when Redis and aebench together keep busyMachine of its CPUs
// busy; an open loop that completes keepPace of its rate is bound by the
// rate it was offered.
const (
	busyCore    = 0.9
	busyMachine = 0.8
)
