package runner

import (
	"math"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
)

// mixResult turns the ledger's split of a run's jobs (engine.Result.Mix)
// into its figures: per kind, the tenants' fairness, the storm's cost.
func mixResult(c conditions.Config, groups []ledger.Group) *summary.MixResult {
	m := c.MixLayout()
	if m.N() == 0 || len(groups) != m.N() {
		return nil
	}
	out := &summary.MixResult{}
	for i, k := range c.Jobs {
		g := groupResult(k.Name, groups[i])
		g.FailClass, g.OfferedShare = k.FailClass, k.Share
		out.Kinds = append(out.Kinds, g)
	}
	if m.Tenants > 0 {
		out.Tenants = tenantFairness(c, m, groups)
	}
	for i, q := range c.Store.Queues {
		g := groupResult(q.Name, groups[m.QueueGroup(i)])
		g.Weight = q.Weight
		for _, ns := range groups[m.QueueGroup(i)].WaitMaxBySecond {
			g.WaitMaxMsBySecond = append(g.WaitMaxMsBySecond, float64(ns)/1e6)
		}
		for _, k := range c.Jobs {
			if k.Queue == q.Name || k.Queue == "" && i == 0 {
				g.OfferedShare += k.Share
			}
		}
		out.Queues, out.QueuePolicy = append(out.Queues, g), c.Store.QueuePolicy
	}
	if m.Storm {
		out.Storm = stormResult(c, m, groups)
	}
	return out
}

func groupResult(name string, g ledger.Group) summary.GroupResult {
	r := summary.GroupResult{Name: name, Planned: g.Planned, Completed: g.Completed, CompletedInWindow: g.CompletedInWindow,
		DeadLettered: g.DeadLettered, Retries: g.Retries, DuplicateCompletions: g.DuplicateCompletions, Jobs: g.Tally}
	for tag, h := range map[string]*hdr.Histogram{"e2e": g.E2E, "queue_wait": g.QueueWait, "lateness": g.Lateness} {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if r.LatencyNs == nil {
			r.LatencyNs = map[string]map[string]float64{}
		}
		r.LatencyNs[tag] = map[string]float64{"p50": float64(h.ValueAtQuantile(50)), "p95": float64(h.ValueAtQuantile(95)),
			"p99": float64(h.ValueAtQuantile(99)), "max": float64(h.Max()), "count": float64(h.TotalCount())}
	}
	return r
}

// tenantFairness compares the noisiest tenant (t0) with the others and
// every tenant's throughput with what it offered.
func tenantFairness(c conditions.Config, m conditions.MixLayout, groups []ledger.Group) *summary.TenantFairness {
	tf := &summary.TenantFairness{Count: m.Tenants, Noisy: groupResult("t0", groups[m.TenantGroup(0)]),
		Quiet: groupResult("quiet", groups[m.QuietGroup()])}
	tf.Noisy.OfferedShare = c.TenantOffered(0)
	tf.Quiet.OfferedShare = 1 - tf.Noisy.OfferedShare
	if n, q := tf.Noisy.LatencyNs["e2e"]["p95"], tf.Quiet.LatencyNs["e2e"]["p95"]; n > 0 && q > 0 {
		tf.NoisyQuietP95, tf.QuietNoisyP95 = n/q, q/n
	}
	var planned, done int64
	for t := range m.Tenants {
		g := groups[m.TenantGroup(t)]
		planned, done = planned+g.Planned, done+g.CompletedInWindow
	}
	var sum, sumSq float64
	var n int
	tf.MinShare = math.Inf(1)
	for t := range m.Tenants {
		g := groups[m.TenantGroup(t)]
		if g.Planned == 0 {
			continue
		}
		x := float64(g.CompletedInWindow) / float64(g.Planned)
		sum, sumSq, n = sum+x, sumSq+x*x, n+1
		ratio := 0.0
		if done > 0 {
			ratio = (float64(g.CompletedInWindow) / float64(done)) / (float64(g.Planned) / float64(planned))
		}
		tf.MinShare, tf.MaxShare = min(tf.MinShare, ratio), max(tf.MaxShare, ratio)
		if t < summary.TenantsListed {
			ts := summary.TenantShare{Tenant: "t" + strconv.Itoa(t), OfferedShare: c.TenantOffered(t), Planned: g.Planned,
				CompletedInWindow: g.CompletedInWindow, ShareRatio: ratio, Lost: g.Lost, Duplicated: g.Duplicated, StartedEarly: g.StartedEarly}
			if g.E2E != nil && g.E2E.TotalCount() > 0 {
				ts.E2EP95Ns = float64(g.E2E.ValueAtQuantile(95))
			}
			tf.Tenants = append(tf.Tenants, ts)
		}
	}
	if n == 0 {
		tf.MinShare = 0
	}
	if sumSq > 0 {
		tf.Jain = sum * sum / (float64(n) * sumSq)
	}
	return tf
}

// stormResult compares the first attempts of the jobs intended during the
// failure windows with those before them.
func stormResult(c conditions.Config, m conditions.MixLayout, groups []ledger.Group) *summary.StormResult {
	st := &summary.StormResult{Before: groupResult("before", groups[m.StormGroup(0)]),
		During: groupResult("during", groups[m.StormGroup(1)]), After: groupResult("after", groups[m.StormGroup(2)])}
	for _, w := range c.FailWindows {
		st.Windows = append(st.Windows, w.String())
	}
	if b, d := st.Before.LatencyNs["queue_wait"]["p99"], st.During.LatencyNs["queue_wait"]["p99"]; b > 0 && d > 0 {
		st.FirstAttemptP99Ratio = d / b
	}
	return st
}
