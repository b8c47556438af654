package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
)

func verdictLine(rs *summary.RunSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  => %s: %s", rs.ID, strings.ToUpper(rs.Status))
	if rs.Error != "" {
		fmt.Fprintf(&b, " (%s)", rs.Error)
	}
	if e2e, ok := rs.LatencyNs["e2e"]; ok {
		fmt.Fprintf(&b, "; %.0f jobs/s, e2e p50 %s p99 %s", rs.Throughput.Completed, latText(rs, e2e["p50"]), latText(rs, e2e["p99"]))
	}
	if rs.Health.IsSuspect() {
		fmt.Fprintf(&b, "; HEALTH SUSPECT")
	}
	l := rs.Ledger
	if rs.Status == summary.StatusError && l.Attempted == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "; %d acknowledged, %d completed, %d dead-lettered, lost %d%s, unexpected %d, duplicated %d, early %d",
		l.Acknowledged, l.Completed, l.DeadLettered, l.Lost, lostNote(rs), l.Unexpected, l.DuplicatedExecutions, l.StartedEarly)
	if l.EarlyDeclared != "" {
		fmt.Fprintf(&b, " (worst by %v, declared by the system: %s)", time.Duration(l.MaxEarlyNs).Round(time.Millisecond), l.EarlyDeclared)
	}
	if pf := rs.Prefill; pf != nil {
		fmt.Fprintf(&b, "\n     prefill: %d jobs (%d delayed past the run) loaded in %.1fs (%.0f jobs/s) before the run, not measured",
			pf.Jobs, pf.Delayed, pf.LoadS, pf.JobsPS)
	}
	if rv := rs.Recovery; rv != nil {
		fmt.Fprintf(&b, "\n     faults: %d landed, %d skipped; %d jobs in flight at them (%d never started), %d started again (recovery p50 %s p99 %s max %s), %d duplicates, %d lost",
			rv.Landed, rv.Skipped, rv.Affected, rv.NeverStarted, rv.Restarted, latText(rs, rv.RecoveryNs["p50"]), latText(rs, rv.RecoveryNs["p99"]), latText(rs, rv.RecoveryNs["max"]), rv.Duplicates, rv.Lost)
		fmt.Fprintf(&b, "\n     leased, never run: %s", unstartedText(*rs))
	}
	if rs.Health.IsSuspect() {
		b.WriteString("\n     health: " + rs.Health.Text() + ": the machine, not the store, may have set these numbers")
	}
	for _, p := range l.Expected {
		b.WriteString("\n     " + p)
	}
	for _, p := range rs.Problems {
		b.WriteString("\n     problem: " + p)
	}
	return b.String()
}

// lostNote says why lost jobs did not fail the run.
func lostNote(rs *summary.RunSummary) string {
	if !rs.Ledger.LostExpected {
		return ""
	}
	if rs.Ledger.SeedVariant {
		return " (expected for this seed variant)"
	}
	if rs.Ledger.LostDeclared != "" {
		return " (declared by the system: " + rs.Ledger.LostDeclared + ")"
	}
	if rs.Config.Redis.Replicas > 0 && hasFault(rs.Config, faults.MasterKill) {
		return " (expected: a master failed over to a replica that replicates asynchronously)"
	}
	if c := rs.Cost; c != nil && c.EvictedKeys > 0 {
		return fmt.Sprintf(" (expected: expect.lost %s; causes %s; %d keys evicted under %s)", rs.Config.Expect.Lost, ledger.FormatStates(rs.Ledger.LostCauses), c.EvictedKeys, rs.Config.Redis.MaxMemoryPolicy)
	}
	if rs.Config.Redis.Persistence == "none" && hasRestart(rs.Config) {
		return " (expected without persistence)"
	}
	if hasRestart(rs.Config) {
		return fmt.Sprintf(" (expected: expect.lost %s with persistence %s)", rs.Config.Expect.Lost, rs.Config.Redis.Persistence)
	}
	// Nothing in the conditions explains the loss: say so, with the cause
	// the read-back gives (a store that drops jobs).
	return fmt.Sprintf(" (allowed by expect.lost %s, but nothing in the conditions explains it: causes %s)", rs.Config.Expect.Lost, ledger.FormatStates(rs.Ledger.LostCauses))
}

// latText is fmtNs for a latency of run r: on simulated time a value
// below the run's resolution reads "<" the resolution, not as a
// measurement, and one real wake-up delay times the speed can account for
// is marked "~" (summary.TimeBase; timeBaseLine says so under the tables).
func latText(r *summary.RunSummary, ns float64) string {
	if r.ResolutionNs > 0 && ns < float64(r.ResolutionNs) {
		return "<" + fmtNs(float64(r.ResolutionNs))
	}
	if r.TimeBase.WakeBounded(ns, r.ResolutionNs) {
		return fmtNs(ns) + "~"
	}
	return fmtNs(ns)
}

// timeBaseLine states a simulated run's units once, or "" on real time.
func timeBaseLine(r *summary.RunSummary) string {
	tb := r.TimeBase
	if tb == nil {
		return ""
	}
	return fmt.Sprintf("time: simulated x%g: latencies, rates, windows, faults (at, recovery) in simulated time; "+
		"Redis cost per job, the cost window, stalls and the harness's own figures in real time. "+
		"<%s: below the resolution (one real ms); ~: at most %s, what real wake-up delay (Redis's 1/hz tick + 2ms) times the speed produces: the harness's clock may set it",
		tb.Speed, fmtNs(float64(r.ResolutionNs)), fmtNs(float64(tb.WakeBoundNs)))
}

// fmtNs formats nanoseconds for people: 850µs, 1.24ms, 12.3ms, 125ms,
// 2.5s, 33.1min (verdict.FormatNs, the one formatter of every table).
func fmtNs(ns float64) string { return verdict.FormatNs(ns) }

// hasRestart reports whether c schedules a fault that restarts Redis.
func hasRestart(c conditions.Config) bool {
	for _, f := range c.Faults {
		if f.Descriptor().RestartsRedis {
			return true
		}
	}
	return false
}

// hasFault reports whether c schedules a fault of kind k.
func hasFault(c conditions.Config, k faults.Kind) bool {
	for _, f := range c.Faults {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// faultLabel is a plot marker's text: the kind, shortened, and the point.
func faultLabel(ev faults.Event) string {
	k := strings.NewReplacer("worker_", "", "recoverer_", "rec-", "redis_", "redis-", "net_", "net-").Replace(string(ev.Fault.Kind))
	if ev.Point.Labelled() {
		k += "@" + string(ev.Point)
	}
	return k
}
