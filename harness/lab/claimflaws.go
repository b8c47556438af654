package lab

import "github.com/aebench/aebench/harness/summary"

// flawRow is one known flaw and how its scenario shows it.
type flawRow struct {
	File   string // scenario file name in the claims folder
	Seed   string
	Flaw   string
	Metric string // what the flaw causes: a key of flawMetrics
	// Ratio, for a cost: reproduced when the variant's count is at least
	// Ratio times the corrected one's; 0: when it is > 0 and the corrected 0.
	Ratio float64
	// Mutants name the patches (mutants/<name>.patch, `make mutants`)
	// that each remove the mechanism the row shows: the row's fidelity
	// test must fail on every one (TestFlawRowsHaveMutants holds the
	// names to the files).
	Mutants []string
}

// flawRows are the seeds' known flaws (shared/seeds/README.md) that a
// scenario of scenarios/claims reproduces.
var flawRows = []flawRow{
	{"flaw-seed004.yaml", "004", "pop ids before processing (ZRANGEBYSCORE + ZREM): a crash between pop and finish loses the job", "lost", 0, []string{"seed004-pop-kept"}},
	{"flaw-seed004-keys.yaml", "004", "jobs in progress counted with KEYS processing:* (line 332): every metrics call walks the whole keyspace, so its cost grows with every key in the database (this scenario keeps finished records, about 3500 keys by its end: the size is ours, the walk is the seed's at any size)", "keys_us", 0, []string{"seed004-stats-without-keys"}},
	{"flaw-seed003-xack.yaml", "003/000", "XACK at claim time with no lease: a worker crash after the claim loses the job", "lost", 0, []string{"seed003-no-xack-at-claim"}},
	{"flaw-seed003-refused.yaml", "003", "the claim script refuses an entry whose job is taken (ALREADY_ASSIGNED, lines 160-162) or not waiting (WRONG_STATUS) and returns without XACK (lines 192-196; and lines 140-143 when the record is gone): the entry stays in the PEL for good. CreateJob (lines 73-100) has no check, so a job created twice (an enqueue retried after a lost reply, or the migration of lines 306-318 run again: here 10% of enqueues sent twice) leaves one such entry each; the count equals the jobs created twice, by design (a leak; no job runs twice)", "pel_pending", 0, []string{"seed003-refused-acked"}},
	{"flaw-seed003-maxlen.yaml", "003", "XADD MAXLEN, listed among the stream's advantages (line 256, one bullet; the seed names no length), on a consumer group's stream: entries not yet read are trimmed and their jobs lost. MAXLEN 500 is ours, set below this scenario's backlog of about 1800: the loss starts wherever the backlog passes the length chosen", "lost", 0, []string{"seed003-maxlen-removed"}},
	{"flaw-seed000-mover.yaml", "000", "approach 1's mover reads due ids, then ZREM and XADD apart: concurrent movers add a job to the stream twice", "duplicate_entries", 0, []string{"seed000-mover-checks-zrem"}},
	{"flaw-seed000-mover.yaml", "000", "the seed's claim refuses the second entry (ALREADY_ASSIGNED) and never acknowledges it: it stays in the PEL, a leak and a wasted claim (no job runs twice)", "pel_pending", 0, []string{"seed000-refused-acked", "seed000-workerid-guard-dropped"}},
	{"flaw-seed000-drop.yaml", "000", "mover removes (ZREM), then adds (XADD) in another command: a mover crash between them drops the job", "lost", 0, []string{"seed000-zrem-xadd-fused"}},
	{"flaw-seed000-early.yaml", "000", "delayed jobs scored in whole seconds (ToUnixTimeSeconds): the mover promotes them up to 1s early and the claim puts them back until due", "early_promotions", 0, []string{"seed000-ms-scores"}},
	{"flaw-seed000-early.yaml", "000", "every delayed job is also added to the stream \"for tracking\": an extra entry per job, read and put back by a claim", "tracking_entries", 0, []string{"seed000-no-tracking-entry"}},
	{"flaw-seed000-ahead.yaml", "000", "approach 2's mover reads up to now + 5 s, takes each job out (ZREM) and moves only those already due: the rest are in no queue", "lost", 0, []string{"seed000-no-lookahead"}},
	{"flaw-seed000-buckets.yaml", "000", "approach 3 writes every job of a bucket into the same three fields (jobId, delayUntil, addedAt; lines 482-494): each job overwrites the last, a bucket keeps only its last job and the others never run", "lost", 0, []string{"seed000-bucket-fields-per-job"}},
	{"flaw-seed001-retry.yaml", "001", "UpdateJob re-adds a retry only when RetryDelayUntil <= now: a retry with a backoff ahead is in no queue and never runs (stranded)", "lost", 0, []string{"seed001-retry-readded"}},
	{"flaw-seed001-retry.yaml", "003/001", "head read outside Lua (seed 003 lines 37-44: ZRANGEBYSCORE take 1), then seed 001's claim of that one id, refused ALREADY_ASSIGNED once another claimer has it (seed 001 lines 317-319): claimers race for the head job", "claim_conflicts", 0, []string{"seed001-head-read-in-lua"}},
	{"flaw-seed001-reply.yaml", "001", "the claim script's reply and its parser one index apart (lines 355-360 against 412-420): CreatedAt is parsed from WorkerId, always empty, so every claim fails (JOB_CONSTRUCTION_ERROR) after the script set the job InProgress and took it out of the queue: no job completes", "not_completed", 0, []string{"seed001-reply-aligned"}},
	{"flaw-seed002-timeout.yaml", "002", "timeout counted from StartedAt, no heartbeat: jobs longer than it run twice", "reruns", 0, []string{"seed002-timeout-renewed"}},
	{"flaw-seed002-scan.yaml", "002", "recovery SCANs every key in Redis: its cost grows with the keyspace, not with the jobs to recover", "recover_p50_us", 10, []string{"seed002-one-scan-step"}},
	{"flaw-seed002-cluster.yaml", "002", "recovery script declares no keys (lines 250-322): on a Redis Cluster it runs on one master and SCANs only that master's keys. With the seed's own key names (ae:job:*, ae:jobs:queue, no hash tag) its write to the queue fails on every master that does not own ae:jobs:queue, after it marked a job Scheduled, and that job is lost (TestSeed002ScriptOnCluster); this row runs it on this harness's names (one hash tag), the narrower flaw: it reaches the queue's slot on 1 call in M, so recovery comes late", "recovery_late_ms", 1.5, []string{"seed002-keys-declared"}},
	{"flaw-seed002-formats.yaml", "002/001", "seed 002's recovery writes RetryDelayUntil and LastUpdatedAt as Unix seconds (lines 283-291, and LastUpdatedAt in its dead branch), where seed 001's HashToJob parses them as dates (lines 84 and 89: DateTime.Parse throws on a Unix number): GetJobById fails on every record the recovery wrote, and on a dead-lettered one for good (nothing rewrites it). The count is the dead-lettered records seed 001's reader cannot parse; for the variant it equals the jobs its recovery dead-lettered, by design", "unreadable_records", 0, []string{"seed002-formats-ms"}},
	{"flaw-unfenced.yaml", "001/000/002/003", "updates after a claim not fenced: seed 001's UpdateJob (lines 227-266) writes the whole record with no WorkerId check, and seeds 000 (line 432) and 003 (lines 19-30) update through it; once a job is recovered to another worker (seed 002's recovery, lines 250-313), the first worker overwrites its state. Seed 004 has no recovery and is not covered", "duplicate_completions", 0, []string{"unfenced-fenced-update"}},
}

// flawMetrics reads what a flaw causes from a run's summary.
var flawMetrics = map[string]func(rs *summary.RunSummary) int64{
	"lost": func(rs *summary.RunSummary) int64 { return rs.Ledger.Lost },
	"not_completed": func(rs *summary.RunSummary) int64 {
		return rs.Ledger.Acknowledged - rs.Ledger.Completed - rs.Ledger.Canceled
	},
	"early":                 func(rs *summary.RunSummary) int64 { return rs.Ledger.StartedEarly },
	"claim_conflicts":       func(rs *summary.RunSummary) int64 { return rs.Counters.ClaimErrors },
	"reruns":                func(rs *summary.RunSummary) int64 { return rs.Ledger.DuplicateReruns },
	"duplicate_completions": func(rs *summary.RunSummary) int64 { return rs.Ledger.DuplicateCompletions },
	"recover_p50_us":        func(rs *summary.RunSummary) int64 { return int64(rs.LatencyNs["recover"]["p50"] / 1e3) },
	// What recovery takes beyond the lease, on the mean: the lease is the
	// same wait in both stores, and the seed's lateness is in every
	// recovery that waits for the queue's master. It was the max of the
	// whole recovery: one slow restart on a loaded machine moved the
	// corrected store's from 1.2 to 2.4 s, and a seed run with lucky slot
	// picks kept its own at 2.2 s, and the row failed (make test beside
	// its other packages). At least 1 ms, so a ratio is defined.
	"recovery_late_ms": func(rs *summary.RunSummary) int64 {
		if rs.Recovery == nil {
			return 0
		}
		return max(1, int64((rs.Recovery.RecoveryNs["mean"]-float64(rs.Config.Workers.Lease))/1e6))
	},
	"duplicate_entries":  auditCount("duplicate_entries"),
	"pel_pending":        auditCount("pel_pending"),
	"early_promotions":   auditCount("early_promotions"),
	"tracking_entries":   auditCount("tracking_entries"),
	"unreadable_records": auditCount("unreadable_records"),
	"keys_us": func(rs *summary.RunSummary) int64 {
		if rs.Cost == nil {
			return 0
		}
		return int64(rs.Cost.CommandMicrosByName["keys"]*float64(rs.Cost.Jobs) + 0.5)
	},
}

// flawSources say where each metric of flawMetrics comes from, for the
// table's reader.
var flawSources = map[string]string{
	"lost":                  "ledger: acknowledged, never finished, confirmed by read-back",
	"not_completed":         "ledger: acknowledged and never completed (dead-lettered, unfinished at the drain or lost)",
	"early":                 "ledger: started before RunAt",
	"claim_conflicts":       "claim calls that returned the seed's ALREADY_ASSIGNED",
	"reruns":                "ledger: jobs run again while their first run was alive",
	"duplicate_completions": "ledger: a job completed twice",
	"recover_p50_us":        "recover call p50, µs",
	"recovery_late_ms":      "fault to the job's next start beyond the lease, mean, ms",
	"duplicate_entries":     "audit: XADDs after a ZREM that removed nothing, counted in Redis as the variant ran",
	"pel_pending":           "audit: XPENDING count after the drain, read the same way for both",
	"early_promotions":      "audit: promoted entries the claim found not yet due, counted in Redis as the variant ran",
	"tracking_entries":      "audit: entries added for tracking at enqueue, counted in Redis as the variant ran",
	"unreadable_records":    "audit: dead-lettered records whose dates seed 001's HashToJob rule rejects, read after the drain the same way for both",
	"keys_us":               "Redis µs inside KEYS over the measured window (INFO commandstats)",
}
