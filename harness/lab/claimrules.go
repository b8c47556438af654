package lab

// ruleDates is when each claim's rule took its present text, and what it
// said before if it was changed after a verdict under it was published:
// the README published the verdicts of the run of 2026-11-25 under earlier
// rules, three of which 021538f then changed (and the idle claim's was
// changed on 2026-11-28), and a change after data reads as fitting the
// rule to the data unless it is shown. docs/claims.md's "Rules and their dates" lists the same, and
// TestRuleDates holds the two equal.
type ruleDates struct {
	// Fixed is the date the rule took its present text.
	Fixed string
	// Earlier is the rule it replaced after a published verdict, with that
	// verdict; "" when none was published under another rule.
	Earlier string
}

// ruleHistory holds every claimCheck's rule dates by scenario file.
var ruleHistory = map[string]ruleDates{
	"claim-throughput.yaml": {Fixed: "2026-11-26"},
	"claim-backlog.yaml": {Fixed: "2026-11-26", Earlier: "until 2026-11-26: jobs/s at a 200k backlog over jobs/s at 20k: holds if zset's ratio < 0.8 while stream's >= 0.9; does not hold if zset's >= 0.8. " +
		"Published under it (README, the run of 2026-11-25): does not hold (zset 0.94x, stream 1.08x from 20k to 200k). Changed to a 10k to 1M backlog and a paired differential of zset's change over stream's"},
	"claim-workers.yaml": {Fixed: "2026-11-26"},
	"claim-encoding.yaml": {Fixed: "2026-11-26", Earlier: "until 2026-11-26: JSON over hash, medians: holds if Redis CPU and memory per job are both >= 1.1x; partly if one is; else does not hold. " +
		"Published under it (README, the run of 2026-11-25): holds partly (Redis CPU 1.18x; memory 0.50x: JSON took half the memory). Changed to the client-side JSON store seed 001 replaces, on bytes on the wire, Redis CPU and client CPU; memory dropped from the rule (shown beside it)"},
	"claim-polling.yaml": {Fixed: "2026-11-26"},
	"claim-idle.yaml": {Fixed: "2026-11-28", Earlier: "until 2026-11-28: Redis CPU per second with 16 idle workers, polling store over blocking one: holds if it lies at or above 2x; does not hold if below; with the store polling every 100 ms, a number of ours. " +
		"Published under it (README, the run of 2026-11-28 at ee028a1): inconclusive (1.99x, interval 1.82-2.18). Changed to the seeds' own poll intervals, 500 ms and 1 s, as the threshold rests on the seeds' loop"},
	"claim-recovery.yaml": {Fixed: "2026-11-26"},
	"claim-dual.yaml": {Fixed: "2026-11-28", Earlier: "until 2026-11-28: the same rule on the median of all repeats, 6 of them, whatever their spread. " +
		"Published under it (README, the run of 2026-11-28 at 48737f9): holds (lateness p99 0.90x, interval 0.06-1.03: four repeats near 0.95x and two near 0.07x, when bucket's lateness p99 stalled to 23-29 ms). " +
		"Changed to judge a two-group measure on its upper group, with 12 repeats. Until 2026-11-26: dual against the best of the four on e2e p99, lateness p99 and Redis CPU per job: holds if within 1.2x of the best on all three, partly on some, else does not hold. " +
		"Published under it (README, the run of 2026-11-25): holds partly (e2e p99 1.13x, lateness p99 1.22x, Redis CPU 1.17x the best, zset). Changed to the better of the two alternatives seed 000 weighed (a background mover, time buckets)"},
}

// ruleNote is how a verdict line names its rule's date.
func ruleNote(file string) string {
	d := ruleHistory[file]
	if d.Fixed == "" {
		return "rule"
	}
	if d.Earlier != "" {
		return "rule (fixed " + d.Fixed + ", after a verdict under an earlier rule: docs/claims.md, Rules and their dates)"
	}
	return "rule (fixed " + d.Fixed + ")"
}
