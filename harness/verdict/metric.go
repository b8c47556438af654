// Package verdict turns result sets into decisions a CI pipeline can gate
// on: statistics over repeats (the median and its 95% confidence interval,
// computed with golang.org/x/perf/benchmath, the statistics benchstat uses),
// the comparison of two result sets with a verdict per metric (better,
// worse, no change, too noisy) from a Mann-Whitney U test, thresholds
// (`--fail-on e2e.p99:+10%`, and k6-style `e2e.p99 < 20ms` for a scenario's
// thresholds block), the exit codes, and the export to Go benchmark text.
//
// It works on its own model of a result set (Set, Run); fromsummary.go is
// the one file that knows the harness's summary.json types.
package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/summary"
)

// Direction says whether a larger value of a metric is an improvement.
type Direction int

// Directions.
const (
	LowerIsBetter Direction = iota
	HigherIsBetter
)

func (d Direction) String() string {
	if d == HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// Kind says how a metric's value is written for people and parsed in a
// threshold.
type Kind int

// Kinds.
const (
	KindDuration Kind = iota // ns; thresholds take a duration (20ms)
	KindRate                 // jobs/s
	KindNumber               // a plain number per job (µs, commands)
	KindBytes                // bytes per job
	KindCount                // jobs per run
)

// Metric is one entry of the catalog.
type Metric struct {
	// Name is what thresholds, --fail-on and the tables call it.
	Name string
	// Field is the run's field in summary.json, for the docs.
	Field string
	// get reads the run's value; false when the run did not measure it
	// (the field is absent from its summary.json).
	get func(r *summary.RunSummary) (float64, bool)
	// phase reads a phase's value, for a phase-scoped threshold's metric
	// (phasegate.go); nil for the run metrics.
	phase func(p summary.PhaseResult) (float64, bool)
	// mix reads a run's job-mix figure (mixgate.go); nil elsewhere.
	mix func(m *summary.MixResult) (float64, bool)
	// windowed: counted in a window of fixed work (the path probe), where
	// the spread a backend declares for its whole runs (stream's reads
	// past deleted entries, which timing decides) does not arise.
	windowed bool
	// detail says what a regression of the metric names beside it (the
	// path probe's scripts); nil: nothing.
	detail func(r *summary.RunSummary) string
	// Unit of the value as stored: ns, jobs/s, µs, cmds, B, jobs.
	Unit   string
	Kind   Kind
	Better Direction
	// BenchUnit is the unit of the benchstat export; benchstat scales
	// "ns" in a numerator to seconds by itself.
	BenchUnit string
	// Gate: compare gates on this metric by default.
	Gate bool
	// Floor, for a deterministic metric (work counted per job, not
	// timed), is its noise floor as a fraction: a change beyond it is a
	// change, decided on the medians alone, with no significance test, so
	// a single repeat decides. 0: a timing metric, tested for significance
	// against the noise floor of compare.
	Floor float64
	// MeteredFloor replaces Floor when both sides ran metered (redis.meter
	// instructions, as scenarios/ci-cost.yaml does: a fixed plan of jobs
	// that the slowed Redis keeps up with, so the counts move far less
	// than in an open loop at full speed); 0 keeps Floor.
	MeteredFloor float64
	Doc          string
}

// Deterministic says the metric counts work per job (Floor > 0): its
// verdicts hold on a noisy shared runner, where timing verdicts do not.
func (m Metric) Deterministic() bool { return m.Floor > 0 }

// FloorFor is the noise floor for runs metered or not.
func (m Metric) FloorFor(metered bool) float64 {
	if metered && m.MeteredFloor > 0 {
		return m.MeteredFloor
	}
	return m.Floor
}

func lat(name, tag, q string, gate bool, doc string) Metric {
	get := func(r *summary.RunSummary) (float64, bool) {
		v, ok := r.LatencyNs[tag][q]
		return v, ok
	}
	return Metric{Name: name, Field: "latency_ns." + tag + "." + q, get: get, Unit: "ns", Kind: KindDuration,
		Better: LowerIsBetter, BenchUnit: "ns/" + strings.ReplaceAll(name, ".", "-"), Gate: gate, Doc: doc}
}

func ledgerMetric(name, field string, v func(l *ledger.Report) int64, doc string) Metric {
	get := func(r *summary.RunSummary) (float64, bool) { return float64(v(&r.Ledger)), true }
	return Metric{Name: name, Field: "ledger." + field, get: get, Unit: "jobs", Kind: KindCount,
		Better: LowerIsBetter, BenchUnit: strings.ReplaceAll(name, ".", "-") + "-jobs/run", Doc: doc}
}

// deterministicFloor is the noise floor of the counted metrics (commands
// and bytes per job): in A/A pairs of scenarios/ci.yaml here commands per
// job moved 0.5% on a quiet machine and up to 3% with throughput.yaml
// running beside them (background loops, and how many jobs a blocking
// claim finds, shift with the load), so 4%.
const deterministicFloor = 0.04

// The floors of metered runs (scenarios/ci-cost.yaml: evenly spaced
// jobs, cost over the whole run), from A/A pairs of it here (README, "The
// deterministic gate") with throughput.yaml loading the machine:
// instructions per job moved 0.1-0.9% for zset, bucket and dual, commands
// per job up to 0.9%, bytes per job up to 0.6%; so 2%. Stream's
// instructions move 2-4% (its reads walk past deleted entries, how many
// depends on timing): its own repeats widen its limit (ownSpread).
const (
	instructionsFloor  = 0.02
	meteredCountFloor  = 0.02
	meteredBytesFloor  = 0.02
	meteredAllocsFloor = 0.03
)

// catalog is the single list of metrics; its order is the tables' order
// (the path probe's last).
var catalog = append([]Metric{
	{Name: "throughput", Field: "throughput.completed_per_s", get: func(r *summary.RunSummary) (float64, bool) { return r.Throughput.Completed, true }, Unit: "jobs/s", Kind: KindRate,
		Better: HigherIsBetter, BenchUnit: "jobs/s", Gate: true,
		Doc: "jobs completed per second over the measured window"},
	lat("e2e.p50", "e2e", "p50", true, "intended enqueue to Complete acknowledged, median"),
	lat("e2e.p99", "e2e", "p99", true, "intended enqueue to Complete acknowledged, 99th percentile"),
	lat("e2e.p99.9", "e2e", "p99.9", false, "intended enqueue to Complete acknowledged, 99.9th percentile"),
	lat("queue_wait.p99", "queue_wait", "p99", false, "handler start minus when the attempt became due, p99"),
	lat("lateness.p99", "lateness", "p99", false, "handler start minus the RunAt asked for (delayed jobs, retries), p99"),
	lat("claim.p99", "claim", "p99", false, "one Claim call that returned jobs, p99"),
	lat("complete.p99", "complete", "p99", false, "one Complete call (with workers.ack_batch > 1 one batch's CompleteAll), p99"),
	lat("ack_wait.p99", "ack_wait", "p99", false, "handler end to its Complete acknowledged (what ack batching adds to e2e), p99"),
	{Name: "redis_cpu_us_per_job", Field: "cost.redis_cpu_us_per_job", get: cost(func(c *summary.CostReport) float64 { return c.RedisCPUMicros }, false), Unit: "µs", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "µs-redis-cpu/job", Gate: true,
		Doc: "Redis CPU (user+sys) per completed job over the measured window"},
	{Name: "busiest_master_cpu_us_per_job", Field: "cost.busiest_master_cpu_us_per_job", get: cost(func(c *summary.CostReport) float64 { return c.BusiestMasterCPUMicros }, true), Unit: "µs", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "µs-busiest-master-cpu/job",
		Doc: "CPU of the busiest Redis server per completed job (all jobs): on a cluster, what bounds throughput at one core a master"},
	{Name: "redis_cpu_percent", Field: "cost.redis_cpu_percent_of_one_core", get: cost(func(c *summary.CostReport) float64 { return c.RedisCPUPercent }, false), Unit: "%", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "%-redis-cpu",
		Doc: "Redis CPU (user+sys) over the measured window, as a share of one core: what a run costs Redis per second, busy or idle"},
	{Name: "net_bytes_per_job", Field: "cost.net_bytes_per_job", get: cost(func(c *summary.CostReport) float64 { return c.NetBytes }, false), Unit: "B", Kind: KindBytes,
		Better: LowerIsBetter, BenchUnit: "B-wire/job", Gate: true, Floor: deterministicFloor, MeteredFloor: meteredBytesFloor,
		Doc: "bytes on the wire per job, both ways (Redis total_net_input_bytes + total_net_output_bytes)"},
	{Name: "cmds_per_job", Field: "cost.commands_per_job", get: cost(func(c *summary.CostReport) float64 { return c.Commands }, false), Unit: "cmds", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "cmds/job", Gate: true, Floor: deterministicFloor, MeteredFloor: meteredCountFloor, Doc: "Redis commands per completed job, counting those inside Lua"},
	{Name: "redis_instructions_per_job", Field: "cost.redis_instructions_per_job", get: cost(func(c *summary.CostReport) float64 { return c.Instructions }, true), Unit: "instr", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "instructions/job", Gate: true, Floor: instructionsFloor,
		Doc: "instructions Redis executed per completed job over the window, counted by callgrind (redis.meter instructions), without serverCron and the meter's INFO"},
	{Name: "redis_command_instructions_per_job", Field: "cost.redis_command_instructions_per_job", get: cost(func(c *summary.CostReport) float64 { return c.CommandInstructions }, true), Unit: "instr", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "command-instructions/job", Gate: true, Floor: instructionsFloor,
		Doc: "the part of redis_instructions_per_job inside processCommand (the commands and their dispatch, not reading and writing the sockets)"},
	{Name: "client_cpu_us_per_job", Field: "harness.client_cpu_us_per_job", get: func(r *summary.RunSummary) (float64, bool) {
		return r.Harness.ClientCPUUsPerJob, r.Harness.ClientCPUUsPerJob != 0
	}, Unit: "µs", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "µs-client-cpu/job",
		Doc: "CPU of the aebench process (client library and harness) per completed job"},
	{Name: "client_allocs_per_job", Field: "harness.client_allocs_per_job", get: func(r *summary.RunSummary) (float64, bool) {
		return r.Harness.ClientAllocsPerJob, r.Harness.ClientAllocsPerJob != 0
	}, Unit: "allocs", Kind: KindNumber,
		Better: LowerIsBetter, BenchUnit: "allocs/job", Floor: 0.05, MeteredFloor: meteredAllocsFloor,
		Doc: "heap allocations of the aebench process (harness and client library) per completed job over the measured window; counted, not timed (not gated by default: add it with --fail-on)"},
	{Name: "memory_per_job", Field: "cost.memory_per_job_bytes", get: cost(func(c *summary.CostReport) float64 { return c.MemoryPerJobBytes }, false), Unit: "B", Kind: KindBytes,
		Better: LowerIsBetter, BenchUnit: "B/job", Doc: "Redis used_memory growth per acknowledged job"},
	{Name: "recovery.p99", Field: "recovery.recovery_ns.p99", get: recoveryP99, Unit: "ns", Kind: KindDuration,
		Better: LowerIsBetter, BenchUnit: "ns/recovery-p99", Doc: "fault to the next handler start of a job in flight at it, p99"},
	ledgerMetric("lost", "lost", func(l *ledger.Report) int64 { return l.Lost }, "acknowledged jobs never completed nor dead-lettered"),
	ledgerMetric("unexpected", "unexpected", func(l *ledger.Report) int64 { return l.Unexpected }, "jobs run that were never enqueued"),
	ledgerMetric("early", "started_early", func(l *ledger.Report) int64 { return l.StartedEarly }, "attempts started before their RunAt"),
	ledgerMetric("duplicated", "duplicated_executions", func(l *ledger.Report) int64 { return l.DuplicatedExecutions }, "handler runs beyond one per job and attempt"),
	ledgerMetric("dead_lettered", "dead_lettered", func(l *ledger.Report) int64 { return l.DeadLettered }, "jobs dead-lettered after their retries"),
}, probeMetrics()...)

// cost reads a cost figure; omitted says summary.json leaves it out at 0
// (a figure only some runs measure: instructions, the busiest master).
func cost(f func(c *summary.CostReport) float64, omitted bool) func(r *summary.RunSummary) (float64, bool) {
	return func(r *summary.RunSummary) (float64, bool) {
		if r.Cost == nil {
			return 0, false
		}
		v := f(r.Cost)
		return v, !omitted || v != 0
	}
}

func recoveryP99(r *summary.RunSummary) (float64, bool) {
	if r.Recovery == nil {
		return 0, false
	}
	v, ok := r.Recovery.RecoveryNs["p99"]
	return v, ok
}

// Value is the run's value of the metric; false when the run did not
// measure it.
func (m Metric) Value(r *summary.RunSummary) (float64, bool) { return m.get(r) }

// Detail is what a regression of the metric in run r names beside it ("":
// nothing).
func (m Metric) Detail(r *summary.RunSummary) string {
	if m.detail == nil {
		return ""
	}
	return m.detail(r)
}

// Catalog returns every metric, in table order.
func Catalog() []Metric { return append([]Metric(nil), catalog...) }

// Lookup finds a metric by name; the error lists the names there are.
func Lookup(name string) (Metric, error) {
	for _, m := range catalog {
		if m.Name == name {
			return m, nil
		}
	}
	return Metric{}, fmt.Errorf("unknown metric %q; metrics: %s", name, strings.Join(MetricNames(), ", "))
}

// MetricNames lists the catalog's names, sorted.
func MetricNames() []string {
	names := make([]string, len(catalog))
	for i, m := range catalog {
		names[i] = m.Name
	}
	sort.Strings(names)
	return names
}

// Format writes a value of the metric for people: 850µs, 1.24ms, 12,345
// jobs/s, 31.2 µs, 1.7 KiB.
func (m Metric) Format(v float64) string {
	switch m.Kind {
	case KindDuration:
		return FormatNs(v)
	case KindRate:
		return fmt.Sprintf("%.0f/s", v)
	case KindBytes:
		if v >= 10*1024 {
			return fmt.Sprintf("%.1f KiB", v/1024)
		}
		return fmt.Sprintf("%.0f B", v)
	case KindCount:
		return fmt.Sprintf("%.0f", v)
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f %s", v, m.Unit)
	}
	return fmt.Sprintf("%.3g %s", v, m.Unit)
}

// FormatNs formats nanoseconds for people: 850µs, 1.24ms, 12.3ms, 125ms, 2.5s.
func FormatNs(ns float64) string {
	switch {
	case ns <= 0:
		return "0"
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.0fµs", ns/1e3)
	case ns < 1e7:
		return fmt.Sprintf("%.2fms", ns/1e6)
	case ns < 1e8:
		return fmt.Sprintf("%.1fms", ns/1e6)
	case ns < 1e10:
		return fmt.Sprintf("%.0fms", ns/1e6)
	case ns < 120e9:
		return fmt.Sprintf("%.1fs", ns/1e9)
	}
	// Simulated runs measure recoveries of half an hour: minutes read better.
	return fmt.Sprintf("%.1fmin", ns/60e9)
}
