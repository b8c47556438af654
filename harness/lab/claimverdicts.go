package lab

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// claimCheck is one of the seeds' claims, the scenario that measures it
// and the rule that turns the numbers into a verdict. Each rule was
// written before its scenario was first measured.
type claimCheck struct {
	File, Seed, Claim string
	// Rule is the threshold, written down beside the verdict.
	Rule string
	// DecidedBy names the interval (or bound) the rule reads.
	DecidedBy string
	eval      func(s *verdict.Set, sum *summary.Summary, j judge) claimEval
}

// claimEval is what a rule found.
type claimEval struct {
	Measured  string
	Verdict   string
	Intervals []interval
}

// claimResult is one row of the verdict table, as claims.json holds it.
type claimResult struct {
	Seed      string `json:"seed"`
	Claim     string `json:"claim"`
	Scenario  string `json:"scenario"`
	Measured  string `json:"measured"`
	Rule      string `json:"rule"`
	DecidedBy string `json:"decided_by"`
	// Verdict is holds, holds partly, does not hold, inconclusive or not
	// measured; PointEstimate says it read the medians alone (--quick).
	Verdict string `json:"verdict"`
	// Intervals are the paired-ratio intervals the rule read, each with
	// its coverage and repeats.
	Intervals []interval `json:"intervals,omitempty"`
	// Repeats is the fewest paired repeats behind any interval.
	Repeats       int  `json:"repeats"`
	PointEstimate bool `json:"point_estimate"`
	// Health is how many of the runs behind the verdict were suspect, and
	// their worst run-queue wait; a suspect run decides no verdict.
	Health     string `json:"health,omitempty"`
	Conditions string `json:"conditions"`
	Results    string `json:"results"`
}

// claimChecks are the seeds' performance and behaviour claims
// (shared/seeds/README.md) with the scenarios of scenarios/claims.
var claimChecks = []claimCheck{
	{"claim-throughput.yaml", "003", "streams give 10-50x the throughput of sorted sets",
		"holds if stream over zset in jobs/s, and zset over stream in Redis CPU µs per job, both lie within [10, 50]; does not hold if both lie outside it (below 10 or above 50); holds partly if one lies within and the other outside",
		"paired-ratio intervals of jobs/s (stream/zset) and of Redis CPU per job (zset/stream)", evalThroughput},
	{"claim-backlog.yaml", "003", "stream claims are O(1), sorted-set claims O(log N): sorted sets degrade with backlog",
		"from a 10k to a 1M backlog, zset's jobs/s change over stream's: holds if it lies below 0.8 (zset loses at least 20% more); does not hold if it lies at or above 0.8",
		"interval of the paired differential (zset 1M/10k) / (stream 1M/10k), jobs/s", evalBacklog},
	{"claim-workers.yaml", "003", "sorted-set claims contend as workers are added; streams scale",
		"from 1 to 64 workers, zset's jobs/s change over stream's: holds if it lies below 0.8; does not hold if it lies at or above 0.8",
		"interval of the paired differential (zset 64/1) / (stream 64/1), jobs/s", evalWorkers},
	{"claim-encoding.yaml", "001", "hashes are cheaper than JSON strings: fewer bytes on the wire, faster updates",
		"at 256B payloads, the JSON store seed 001 replaces (the record travels to the client and back) over the hash store, in bytes on the wire, Redis CPU and client CPU per job: each part is met if its interval lies at or above 1.1x, missed if it lies below; holds if all three are met, partly if some",
		"paired-ratio intervals of zset-json-client over zset (hash) in the 256B cell: bytes on the wire, Redis CPU and client CPU per job", evalEncoding},
	{"claim-polling.yaml", "003/000", "no polling means lower latency",
		"e2e p50 of the polling store over the blocking one: holds if it lies at or above 2x; does not hold if it lies below 2x",
		"paired-ratio interval of e2e p50 (zset-poll/zset)", evalPolling},
	{"claim-idle.yaml", "003", "polling costs Redis work even when no jobs are available",
		"Redis CPU per second with 16 idle workers, polling store over blocking one, at each of the seeds' poll intervals (500 ms, seed 004 line 171; 1 s, seed 000 line 386): holds if both lie at or above 2x; does not hold if both lie below; holds partly if one does",
		"paired-ratio intervals of Redis CPU % of one core (zset-poll/zset), one per poll interval", evalIdle},
	{"claim-recovery.yaml", "002", "recovery happens within timeout + interval and is safe with many recoverers",
		"holds if every backend's recovery max <= 1.2 x (lease + recovery_interval) in every run, with 0 lost; concurrent recoverers: conformance case ConcurrentRecoverers (make test)",
		"each run's recovery maximum (a bound on every run, not an interval)", evalRecovery},
	{"claim-dual.yaml", "000", "the dual queue is the recommended design (over a background mover and time buckets)",
		"dual over the better of dual with a background mover (approach 2) and bucket (approach 3), per metric: e2e p99, lateness p99, Redis CPU per job; a metric is met if its interval lies at or below 1.2x, missed if it lies above; holds if all are met, partly if some; a metric whose paired ratios fall into two groups (a gap of 3x or more between sorted neighbours) is judged on the upper group alone, where dual fares worse (12 repeats in a full run, so that group keeps enough for the coverage floor)",
		"paired-ratio intervals of dual over the better alternative of the same repeat, per metric", evalDual},
}

func evalThroughput(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	jobs := ratio(s, "stream/zset jobs/s", side{"stream", "throughput", nil}, side{"zset", "throughput", nil})
	cpu := ratio(s, "zset/stream Redis CPU per job", side{"zset", "redis_cpu_us_per_job", nil}, side{"stream", "redis_cpu_us_per_job", nil})
	return claimEval{Measured: describe(jobs, cpu), Verdict: j.verdict([]interval{jobs, cpu}, j.within(jobs, 10, 50), j.within(cpu, 10, 50)), Intervals: []interval{jobs, cpu}}
}

func evalBacklog(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	return evalChange(s, j, "producers.prefill=10000", "producers.prefill=1000000", "1M/10k")
}

func evalWorkers(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	return evalChange(s, j, "workers.count=1", "workers.count=64", "64/1 workers")
}

// evalChange judges "zset degrades where stream does not" between two
// cells: zset's change in jobs/s over stream's, below 0.8 to hold.
func evalChange(s *verdict.Set, j judge, from, to, what string) claimEval {
	own := func(b string) interval {
		return ratio(s, b+" "+what+" jobs/s", side{b, "throughput", []string{to}}, side{b, "throughput", []string{from}})
	}
	d := change(s, "zset's change over stream's", "throughput", "zset", "stream", from, to)
	return claimEval{Measured: describe(d, own("zset"), own("stream")), Verdict: j.verdict([]interval{d}, j.below(d, 0.8)), Intervals: []interval{d}}
}

func evalEncoding(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	const at = "producers.payload=256"
	var ivs []interval
	var parts []tri
	for _, m := range []string{"net_bytes_per_job", "redis_cpu_us_per_job", "client_cpu_us_per_job"} {
		iv := ratio(s, "json-client/hash "+m, side{"zset-json-client", m, []string{at}}, side{"zset", m, []string{at}})
		ivs = append(ivs, iv)
		parts = append(parts, j.atLeast(iv, 1.1))
	}
	// Beside the verdict: the in-Lua JSON store, and memory at each size
	// (the hash's listpack threshold).
	ctx := []interval{ratio(s, "json-in-Lua/hash redis_cpu_us_per_job", side{"zset-json", "redis_cpu_us_per_job", []string{at}}, side{"zset", "redis_cpu_us_per_job", []string{at}})}
	for _, size := range []string{"16", "256", "4096"} {
		c := "producers.payload=" + size
		ctx = append(ctx, ratio(s, "json/hash memory_per_job at "+size+"B", side{"zset-json", "memory_per_job", []string{c}}, side{"zset", "memory_per_job", []string{c}}))
	}
	return claimEval{Measured: describe(ivs...) + ". Beside it: " + describe(ctx...), Verdict: j.verdict(ivs, parts...), Intervals: append(ivs, ctx...)}
}

func evalPolling(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	iv := ratio(s, "zset-poll/zset e2e p50", side{"zset-poll", "e2e.p50", nil}, side{"zset", "e2e.p50", nil})
	return claimEval{Measured: describe(iv), Verdict: j.verdict([]interval{iv}, j.atLeast(iv, 2)), Intervals: []interval{iv}}
}

// idlePolls are the seeds' own poll intervals, the cells of claim-idle.
var idlePolls = []string{"500ms", "1s"}

func evalIdle(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	own := func(b, cell string) string {
		var xs []float64
		for _, v := range byRepeat(s, side{b, "redis_cpu_percent", []string{cell}}) {
			xs = append(xs, v)
		}
		return fmt.Sprintf("%s %.2f%% of a core", b, medianInterval("", xs).Estimate)
	}
	var ivs []interval
	var parts []tri
	var measured []string
	for _, p := range idlePolls {
		cell := "store.poll_interval=" + p
		iv := ratio(s, "zset-poll/zset Redis CPU % at "+p, side{"zset-poll", "redis_cpu_percent", []string{cell}}, side{"zset", "redis_cpu_percent", []string{cell}})
		ivs = append(ivs, iv)
		parts = append(parts, j.atLeast(iv, 2))
		measured = append(measured, "polling every "+p+": "+own("zset-poll", cell)+", "+own("zset", cell)+"; "+describe(iv))
	}
	return claimEval{Measured: strings.Join(measured, ". "), Verdict: j.verdict(ivs, parts...), Intervals: ivs}
}

func evalRecovery(_ *verdict.Set, sum *summary.Summary, _ judge) claimEval {
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
		return claimEval{Measured: "no run recovered a job", Verdict: verdictNotMeasured}
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
	return claimEval{Measured: strings.Join(parts, "; "), Verdict: combine(of(ok))}
}

// dualAlternatives are what seed 000 weighed its dual queue against:
// approach 2 (a background mover) and approach 3 (time buckets).
var dualAlternatives = []string{"dual-background", "bucket"}

func evalDual(s *verdict.Set, _ *summary.Summary, j judge) claimEval {
	var ivs []interval
	var parts []tri
	var notes []string
	for _, m := range []string{"e2e.p99", "lateness.p99", "redis_cpu_us_per_job"} {
		sides := []side{{"dual", m, nil}}
		for _, a := range dualAlternatives {
			sides = append(sides, side{a, m, nil})
		}
		iv := paired(s, "dual/best alternative "+m, func(v []float64) (float64, bool) {
			best := math.Inf(1)
			for _, x := range v[1:] {
				best = math.Min(best, x)
			}
			return v[0] / best, best > 0
		}, sides...)
		if low, high, ok := splitModes(iv.Values); ok {
			// Two groups: the median of both reads the mixture, and noise
			// in which group a repeat falls into decides. The claim must
			// hold where dual fares worse, so the upper group decides.
			notes = append(notes, fmt.Sprintf("%s bimodal: %d of %d repeats near %.2fx, %d near %.2fx; judged on the upper group",
				m, len(low), len(iv.Values), medianOf(low), len(high), medianOf(high)))
			iv = medianInterval(iv.Name+" (upper group)", high)
		}
		ivs = append(ivs, iv)
	}
	ivs = jointIntervals(ivs)
	for _, iv := range ivs {
		parts = append(parts, j.atMost(iv, 1.2))
	}
	measured := describe(ivs...)
	if len(notes) > 0 {
		measured += " (" + strings.Join(notes, "; ") + ")"
	}
	return claimEval{Measured: measured, Verdict: j.verdict(ivs, parts...), Intervals: ivs}
}

// modeGap is the ratio between two neighbouring sorted values that splits
// a measure into two groups: claim-dual's lateness ratios sat near 0.07 and
// near 1 (a 12x gap), while repeats of one mode spread by under 1.3x.
const modeGap = 3

// splitModes splits positive values at their widest gap between sorted
// neighbours when that gap is at least modeGap: low and high, each
// non-empty; ok false when there is no such gap (one group).
func splitModes(vs []float64) (low, high []float64, ok bool) {
	xs := slices.Clone(vs)
	slices.Sort(xs)
	at, widest := -1, 0.0
	for i := 1; i < len(xs); i++ {
		if xs[i-1] > 0 && xs[i]/xs[i-1] > widest {
			at, widest = i, xs[i]/xs[i-1]
		}
	}
	if at < 0 || widest < modeGap {
		return nil, nil, false
	}
	return xs[:at], xs[at:], true
}

// verdictTable writes the claims' verdict table as Markdown.
func verdictTable(rows []claimResult) string {
	var b strings.Builder
	b.WriteString("## The seeds' claims\n\n")
	b.WriteString("Each row: the claim, what its scenario measured (medians of ratios paired repeat by repeat, each with its " +
		"order-statistics interval and that interval's coverage; ratios taken within one run on one machine), the rule, " +
		"which interval decides it, and the verdict: holds (every part met), does not hold (every part missed), holds partly " +
		"(some met and some missed), does not hold in full (some missed, the others undecided), inconclusive when an interval " +
		"straddles the rule's threshold, inconclusive: too few repeats when an interval's coverage, or the joint coverage " +
		"of a rule's intervals (Bonferroni), is under 90%, or inconclusive: suspect runs when the health check found the " +
		"machine may have set a run's numbers (its threads waiting for a CPU, its producers late; each scenario's health below). A verdict marked (point estimate) read the medians alone (--quick).\n\n")
	b.WriteString("| seed | claim | measured | rule | decided by | verdict |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s: %s | %s | **%s** |\n", r.Seed, r.Claim, r.Measured, ruleNote(r.Scenario), r.Rule, r.DecidedBy, r.shownVerdict())
	}
	b.WriteString("\nConditions (per scenario):\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "- %s: %s; health: %s (results %s)\n", r.Scenario, r.Conditions, orNone(r.Health), r.Results)
	}
	return b.String()
}

// shownVerdict is the verdict as printed: marked when it read the medians
// alone.
func (r claimResult) shownVerdict() string {
	if r.PointEstimate && r.Verdict != verdictNotMeasured {
		return r.Verdict + pointMark
	}
	return r.Verdict
}

func orNone(s string) string {
	if s == "" {
		return "not judged"
	}
	return s
}
