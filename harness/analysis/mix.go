package analysis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

// MixNote explains the job-mix tables, in the terminal and on the page.
const MixNote = "Job mix (jobs:, failure_windows:), from the ledger after the run: each job's kind and tenant are drawn from its id, so every backend ran the same jobs. " +
	"e2e: intended enqueue to completion of immediate jobs done with no retry; first wait: the first attempt's queue-wait; late: a delayed job's first start after its RunAt " +
	"(two significant digits; warm-up excluded). Counts cover every job of the class. Noisy: tenant t0; quiet: every other tenant pooled; share: a tenant's share of the jobs completed " +
	"in the window over its share of those planned (1 = what it asked for); Jain: Jain's index over the tenants' normalised throughput (1 = even)."

// KindHeader heads the per-kind table (KindRows).
func KindHeader() []string {
	return []string{"backend", "kind", "share", "class", "planned", "completed", "dead", "retries", "dup", "lost", "e2e p50", "e2e p95", "e2e p99", "first wait p95", "first wait p99", "late p99"}
}

// KindRows is one run's kinds.
func KindRows(name string, m *summary.MixResult) [][]string {
	var rows [][]string
	for _, k := range m.Kinds {
		rows = append(rows, append([]string{name, k.Name, fmt.Sprintf("%.0f%%", k.OfferedShare*100), k.FailClass}, groupCells(k)...))
	}
	return rows
}

// groupCells are a group's counts and latencies.
func groupCells(g summary.GroupResult) []string {
	lat := func(tag, q string) string {
		if v, ok := g.LatencyNs[tag][q]; ok {
			return verdict.FormatNs(v)
		}
		return "-"
	}
	return []string{i64(g.Planned), i64(g.Completed), i64(g.DeadLettered), i64(g.Retries), i64(g.Jobs.Duplicated), i64(g.Jobs.Lost),
		lat("e2e", "p50"), lat("e2e", "p95"), lat("e2e", "p99"), lat("queue_wait", "p95"), lat("queue_wait", "p99"), lat("lateness", "p99")}
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// TenantHeader heads the tenants' fairness table (TenantRow).
func TenantHeader() []string {
	return []string{"backend", "tenants", "noisy share", "noisy e2e p95", "quiet e2e p95", "noisy/quiet", "quiet/noisy", "Jain", "share min-max", "noisy first wait p99", "quiet first wait p99"}
}

// TenantRow is one run's fairness among its tenants; ok false without tenants.
func TenantRow(name string, m *summary.MixResult) (row []string, ok bool) {
	t := m.Tenants
	if t == nil {
		return nil, false
	}
	p := func(g summary.GroupResult, tag, q string) string {
		if v, ok := g.LatencyNs[tag][q]; ok {
			return verdict.FormatNs(v)
		}
		return "-"
	}
	ratio := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	return []string{name, strconv.Itoa(t.Count), fmt.Sprintf("%.0f%%", t.Noisy.OfferedShare*100), p(t.Noisy, "e2e", "p95"), p(t.Quiet, "e2e", "p95"),
		ratio(t.NoisyQuietP95), ratio(t.QuietNoisyP95), fmt.Sprintf("%.3f", t.Jain), fmt.Sprintf("%.2f-%.2f", t.MinShare, t.MaxShare),
		p(t.Noisy, "queue_wait", "p99"), p(t.Quiet, "queue_wait", "p99")}, true
}

// StormHeader heads the retry storm's table (StormRows).
func StormHeader() []string {
	return append([]string{"backend", "jobs intended"}, KindHeader()[4:]...)
}

// StormRows is one run's jobs before, during and after its failure
// windows, and the line that compares the first attempts.
func StormRows(name string, m *summary.MixResult) (rows [][]string, line string) {
	s := m.Storm
	if s == nil {
		return nil, ""
	}
	for _, g := range []summary.GroupResult{s.Before, s.During, s.After} {
		rows = append(rows, append([]string{name, g.Name}, groupCells(g)...))
	}
	var dup, lost int64
	for _, g := range []summary.GroupResult{s.Before, s.During, s.After} {
		dup, lost = dup+g.DuplicateCompletions, lost+g.Jobs.Lost
	}
	ratio := "not comparable (a side has no first attempts)"
	if s.FirstAttemptP99Ratio > 0 {
		ratio = fmt.Sprintf("%.2fx", s.FirstAttemptP99Ratio)
	}
	line = fmt.Sprintf("%s: storm %s: first-attempt queue-wait p99 during / before %s; %d duplicate completions, %d lost around it",
		name, strings.Join(s.Windows, ", "), ratio, dup, lost)
	return rows, line
}

// QueueHeader heads the queues' table (QueueRows).
func QueueHeader() []string {
	return []string{"backend", "policy", "queue", "weight", "offered", "planned", "done in window", "share of done", "unfinished", "first wait p50", "first wait p95", "first wait p99", "longest first wait", "e2e p99"}
}

// QueueRows is one run's queues: what each was offered, how much of the
// work done in the window was its, and how long its first attempts
// waited (the longest: starvation).
func QueueRows(name string, m *summary.MixResult) [][]string {
	var done int64
	for _, q := range m.Queues {
		done += q.CompletedInWindow
	}
	var rows [][]string
	for _, q := range m.Queues {
		lat := func(tag, p string) string {
			if v, ok := q.LatencyNs[tag][p]; ok {
				return verdict.FormatNs(v)
			}
			return "-"
		}
		share := "-"
		if done > 0 {
			share = fmt.Sprintf("%.0f%%", float64(q.CompletedInWindow)/float64(done)*100)
		}
		rows = append(rows, []string{name, m.QueuePolicy, q.Name, strconv.Itoa(q.Weight), fmt.Sprintf("%.0f%%", q.OfferedShare*100), i64(q.Planned),
			i64(q.CompletedInWindow), share, i64(q.Jobs.Acknowledged - q.Completed - q.DeadLettered),
			lat("queue_wait", "p50"), lat("queue_wait", "p95"), lat("queue_wait", "p99"), lat("queue_wait", "max"), lat("e2e", "p99")})
	}
	return rows
}
