package cli

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/harness/verdict/stats"
)

// Verdicts of a claim.
const (
	verdictHolds       = "holds"
	verdictNotHold     = "does not hold"
	verdictPartly      = "holds partly"
	verdictNotMeasured = "not measured"
)

// claimCheck is one of the seeds' claims, the scenario that measures it
// and the rule that turns the numbers into a verdict.
type claimCheck struct {
	File, Seed, Claim string
	// Rule is the threshold, written down beside the verdict.
	Rule string
	eval func(b *stats.Block, sum *summary.Summary) (measured string, verdict string)
}

// claimResult is one row of the verdict table, as claims.json holds it.
type claimResult struct {
	Seed       string `json:"seed"`
	Claim      string `json:"claim"`
	Scenario   string `json:"scenario"`
	Measured   string `json:"measured"`
	Rule       string `json:"rule"`
	Verdict    string `json:"verdict"`
	Conditions string `json:"conditions"`
	Results    string `json:"results"`
}

// claimChecks are the seeds' performance and behaviour claims
// (shared/seeds/README.md) with the scenarios of scenarios/claims.
var claimChecks = []claimCheck{
	{"claim-throughput.yaml", "003", "streams give 10-50x the throughput of sorted sets",
		"holds if the 95% CI of stream/zset median jobs/s lies within [10, 50]; does not hold if it lies below 10", evalThroughput},
	{"claim-backlog.yaml", "003", "stream claims are O(1), sorted-set claims O(log N): sorted sets degrade with backlog",
		"jobs/s at a 200k backlog over jobs/s at 20k: holds if zset's ratio < 0.8 while stream's >= 0.9; does not hold if zset's >= 0.8", evalBacklog},
	{"claim-encoding.yaml", "001", "hashes are cheaper than JSON strings",
		"JSON over hash, medians: holds if Redis CPU and memory per job are both >= 1.1x; partly if one is; else does not hold", evalEncoding},
	{"claim-polling.yaml", "003/000", "no polling means lower latency",
		"e2e p50 of the polling store over the blocking one: holds if >= 2x", evalPolling},
	{"claim-recovery.yaml", "002", "recovery happens within timeout + interval and is safe with many recoverers",
		"holds if every backend's recovery max <= 1.2 x (lease + recovery_interval) with 0 lost; concurrent recoverers: conformance case ConcurrentRecoverers (make test)", evalRecovery},
	{"claim-dual.yaml", "000", "the dual queue is the recommended design",
		"dual against the best of the four on e2e p99, lateness p99 and Redis CPU per job: holds if within 1.2x of the best on all three, partly on some, else does not hold", evalDual},
}

// median is a group's median of metric in the cell whose varied fields
// include every part of vary (none: any cell).
func median(b *stats.Block, backend, metric string, vary ...string) (stats.Stat, bool) {
	for _, g := range b.Groups {
		if g.Backend != backend || !hasAll(g.Vary, vary) {
			continue
		}
		return g.Metric(metric)
	}
	return stats.Stat{}, false
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// ratioCI is the ratio of two medians and a conservative interval from
// their CIs (lo/hi and hi/lo); without CIs, the ratio alone.
func ratioCI(num, den stats.Stat) (r, lo, hi float64) {
	r = num.Median / den.Median
	lo, hi = r, r
	if num.CI != nil && den.CI != nil && den.CI.Lo > 0 && den.CI.Hi > 0 {
		lo, hi = num.CI.Lo/den.CI.Hi, num.CI.Hi/den.CI.Lo
	}
	return r, lo, hi
}

func fmtRatio(r, lo, hi float64) string {
	if lo == r && hi == r {
		return fmt.Sprintf("%.2fx (no CI: too few repeats)", r)
	}
	return fmt.Sprintf("%.2fx (95%% CI %.2f-%.2f)", r, lo, hi)
}

// pair is two backends' medians of one metric, or ok false when either
// is missing.
func pair(b *stats.Block, num, den, metric string) (n, d stats.Stat, ok bool) {
	n, ok1 := median(b, num, metric)
	d, ok2 := median(b, den, metric)
	return n, d, ok1 && ok2 && d.Median > 0
}

func evalThroughput(b *stats.Block, _ *summary.Summary) (string, string) {
	s, z, ok := pair(b, "stream", "zset", "throughput")
	if !ok {
		return "no throughput for zset or stream", verdictNotMeasured
	}
	r, lo, hi := ratioCI(s, z)
	m := fmt.Sprintf("stream %.0f jobs/s, zset %.0f jobs/s: stream/zset %s", s.Median, z.Median, fmtRatio(r, lo, hi))
	switch {
	case lo >= 10 && hi <= 50:
		return m, verdictHolds
	case hi < 10:
		return m, verdictNotHold
	}
	return m, verdictPartly
}

func evalBacklog(b *stats.Block, _ *summary.Summary) (string, string) {
	ratio := func(backend string) (float64, string, bool) {
		small, ok1 := median(b, backend, "throughput", "producers.prefill=20000")
		big, ok2 := median(b, backend, "throughput", "producers.prefill=200000")
		if !ok1 || !ok2 || small.Median <= 0 {
			return 0, "", false
		}
		r, lo, hi := ratioCI(big, small)
		return r, fmt.Sprintf("%s %.0f -> %.0f jobs/s (%s)", backend, small.Median, big.Median, fmtRatio(r, lo, hi)), true
	}
	zr, zm, ok1 := ratio("zset")
	sr, sm, ok2 := ratio("stream")
	if !ok1 || !ok2 {
		return "no throughput at both backlogs", verdictNotMeasured
	}
	m := "backlog 20k -> 200k: " + zm + "; " + sm
	switch {
	case zr < 0.8 && sr >= 0.9:
		return m, verdictHolds
	case zr >= 0.8:
		return m, verdictNotHold
	}
	return m, verdictPartly
}

func evalEncoding(b *stats.Block, _ *summary.Summary) (string, string) {
	var parts []string
	costlier := 0
	for _, metric := range []string{"redis_cpu_us_per_job", "memory_per_job"} {
		h, ok1 := median(b, "zset", metric, "encoding=hash")
		j, ok2 := median(b, "zset", metric, "encoding=json")
		if !ok1 || !ok2 || h.Median <= 0 {
			return "no " + metric + " for both encodings", verdictNotMeasured
		}
		r, lo, hi := ratioCI(j, h)
		parts = append(parts, fmt.Sprintf("%s hash %.1f, json %.1f: json/hash %s", metric, h.Median, j.Median, fmtRatio(r, lo, hi)))
		if r >= 1.1 {
			costlier++
		}
	}
	m := strings.Join(parts, "; ")
	switch costlier {
	case 2:
		return m, verdictHolds
	case 1:
		return m, verdictPartly
	}
	return m, verdictNotHold
}

func evalPolling(b *stats.Block, _ *summary.Summary) (string, string) {
	poll, blk, ok := pair(b, "zset-poll", "zset", "e2e.p50")
	if !ok {
		return "no e2e p50 for zset or zset-poll", verdictNotMeasured
	}
	r, lo, hi := ratioCI(poll, blk)
	m := fmt.Sprintf("e2e p50 blocking %s, polling every 100ms %s: %s", verdict.FormatNs(blk.Median), verdict.FormatNs(poll.Median), fmtRatio(r, lo, hi))
	if r >= 2 {
		return m, verdictHolds
	}
	return m, verdictNotHold
}

func evalRecovery(_ *stats.Block, sum *summary.Summary) (string, string) {
	type agg struct {
		runs, over   int
		worst, bound float64
		p50s         []float64
		lost         int64
	}
	byLabel := map[string]*agg{}
	var order []string
	for _, r := range sum.Runs {
		if r.Recovery == nil || r.Calibration || r.Recovery.RecoveryNs["max"] <= 0 {
			continue
		}
		a := byLabel[r.Label]
		if a == nil {
			a = &agg{bound: 1.2 * float64(r.Config.Workers.Lease+r.Config.Workers.RecoveryInterval)}
			byLabel[r.Label] = a
			order = append(order, r.Label)
		}
		a.runs++
		m := r.Recovery.RecoveryNs["max"]
		a.worst = math.Max(a.worst, m)
		if m > a.bound {
			a.over++
		}
		a.p50s = append(a.p50s, r.Recovery.RecoveryNs["p50"])
		a.lost += r.Ledger.Lost
	}
	if len(order) == 0 {
		return "no run recovered a job", verdictNotMeasured
	}
	var parts []string
	ok := true
	for _, l := range order {
		a := byLabel[l]
		sort.Float64s(a.p50s)
		parts = append(parts, fmt.Sprintf("%s recovery p50 %s, worst max %s (bound %s; %d of %d runs over it), lost %d", l,
			verdict.FormatNs(a.p50s[len(a.p50s)/2]), verdict.FormatNs(a.worst), verdict.FormatNs(a.bound), a.over, a.runs, a.lost))
		ok = ok && a.over == 0 && a.lost == 0
	}
	if ok {
		return strings.Join(parts, "; "), verdictHolds
	}
	return strings.Join(parts, "; "), verdictNotHold
}

func evalDual(b *stats.Block, _ *summary.Summary) (string, string) {
	var parts []string
	near, measured := 0, 0
	for _, metric := range []string{"e2e.p99", "lateness.p99", "redis_cpu_us_per_job"} {
		best, bestName := math.Inf(1), ""
		var dual float64
		for _, g := range b.Groups {
			st, ok := g.Metric(metric)
			if !ok || st.Median <= 0 {
				continue
			}
			if st.Median < best {
				best, bestName = st.Median, g.Backend
			}
			if g.Backend == "dual" {
				dual = st.Median
			}
		}
		if dual <= 0 || bestName == "" {
			continue
		}
		measured++
		parts = append(parts, fmt.Sprintf("%s dual %.2fx the best (%s)", metric, dual/best, bestName))
		if dual <= 1.2*best {
			near++
		}
	}
	m := strings.Join(parts, "; ")
	switch {
	case measured == 0:
		return "no metric for dual", verdictNotMeasured
	case near == measured:
		return m, verdictHolds
	case near > 0:
		return m, verdictPartly
	}
	return m, verdictNotHold
}

// verdictTable writes the claims' verdict table as Markdown.
func verdictTable(rows []claimResult) string {
	var b strings.Builder
	b.WriteString("## The seeds' claims\n\n")
	b.WriteString("Each row: the claim, what its scenario measured (medians over repeats with 95% CIs where there are enough repeats; " +
		"ratios taken within one run on one machine), the rule that gives the verdict, and the verdict.\n\n")
	b.WriteString("| seed | claim | measured | rule | verdict |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** |\n", r.Seed, r.Claim, r.Measured, r.Rule, r.Verdict)
	}
	b.WriteString("\nConditions (per scenario):\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s: %s (results %s)\n", r.Scenario, r.Conditions, r.Results)
	}
	return b.String()
}
