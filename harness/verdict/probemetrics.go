package verdict

import (
	"sort"
	"strings"

	"github.com/aebench/aebench/harness/summary"
)

// probePaths are the path probe's windows (package probe), in the order it
// reports them, each with the floor of its instructions (0: reported, not
// gated). An index of more than 128 members is a skiplist, whose levels
// are Redis's random draws, so a window that writes one moves run to run:
// recover (150 leases in the active index) 1-2.5% in A/A runs here, so 4%;
// delayed (into a queue of 150 due jobs for zset, a stream or a delayed
// set) up to 7%, so its instructions are shown, not gated. The others
// moved under 1%. Commands per job repeat exactly everywhere: 2%.
var probePaths = []struct {
	name  string
	floor float64
}{{"enqueue", pathFloor}, {"delayed", 0}, {"pop", pathFloor}, {"complete", pathFloor}, {"handoff", pathFloor}, {"fail", pathFloor}, {"recover", 0.04}}

// The floors of the path probe's counts. Each window runs the same calls
// on an emptied Redis, so its counts repeat to within 0.3% (A/A runs of
// scenarios/ci-cost.yaml here, docs/ci.md); stored bytes and allocations
// repeat to within 0.5%. So 1%: +16 bytes on a zset job's 840 is 1.9%,
// and one more allocation on its 46 is 2.2%.
const (
	pathFloor   = 0.02
	storedFloor = 0.01
	allocsFloor = 0.01
)

// probeMetrics are the gated metrics of the path probe: instructions inside
// commands and commands, per path, the bytes stored a job and a claimed
// job's allocations. Only metered runs have them.
func probeMetrics() []Metric {
	var out []Metric
	for _, pf := range probePaths {
		p := pf.name
		path := func(f func(c summary.PathCost) float64) func(r *summary.RunSummary) (float64, bool) {
			return func(r *summary.RunSummary) (float64, bool) {
				if r.Probe == nil {
					return 0, false
				}
				c, ok := r.Probe.Paths[p]
				return f(c), ok
			}
		}
		detail := func(r *summary.RunSummary) string { return pathScripts(r, p) }
		out = append(out,
			Metric{Name: "path." + p + ".instructions", Field: "probe.paths." + p + ".redis_command_instructions_per_job",
				get: path(func(c summary.PathCost) float64 { return c.CommandInstructions }), windowed: true, detail: detail, Unit: "instr", Kind: KindNumber,
				Better: LowerIsBetter, BenchUnit: "command-instructions/" + p, Gate: pf.floor > 0, Floor: max(pf.floor, pathFloor),
				Doc: "the path probe's " + p + " window: instructions Redis executed inside commands per job (callgrind); a regression names the scripts the window ran"},
			Metric{Name: "path." + p + ".cmds", Field: "probe.paths." + p + ".commands_per_job",
				get: path(func(c summary.PathCost) float64 { return c.Commands }), windowed: true, detail: detail, Unit: "cmds", Kind: KindNumber,
				Better: LowerIsBetter, BenchUnit: "cmds/" + p, Gate: true, Floor: pathFloor,
				Doc: "the path probe's " + p + " window: Redis commands per job, counting those inside scripts"})
	}
	probe := func(f func(p *summary.PathProbe) float64) func(r *summary.RunSummary) (float64, bool) {
		return func(r *summary.RunSummary) (float64, bool) {
			if r.Probe == nil {
				return 0, false
			}
			v := f(r.Probe)
			return v, v != 0
		}
	}
	return append(out,
		Metric{Name: "record_bytes_per_job", Field: "probe.record_bytes_per_job", get: probe(func(p *summary.PathProbe) float64 { return p.RecordBytesPerJob }), windowed: true,
			Unit: "B", Kind: KindBytes, Better: LowerIsBetter, BenchUnit: "B-record/job", Gate: true, Floor: storedFloor,
			Doc: "the path probe: MEMORY USAGE of the job records (hashes, strings) per job after a fixed set of enqueues; they repeat exactly run to run"},
		Metric{Name: "stored_bytes_per_job", Field: "probe.stored_bytes_per_job", get: probe(func(p *summary.PathProbe) float64 { return p.StoredBytesPerJob }),
			Unit: "B", Kind: KindBytes, Better: LowerIsBetter, BenchUnit: "B-stored/job",
			Doc: "the path probe: MEMORY USAGE of every key per job after a fixed set of enqueues, records and indexes (not gated: an index's bytes move 3-10% run to run, with Redis's random skiplist levels and the stream IDs' times)"},
		Metric{Name: "client_allocs_per_claimed_job", Field: "probe.client_allocs_per_claimed_job", get: probe(func(p *summary.PathProbe) float64 { return p.ClientAllocsPerClaimedJob }), windowed: true,
			Unit: "allocs", Kind: KindNumber, Better: LowerIsBetter, BenchUnit: "allocs/claimed-job", Gate: true, Floor: allocsFloor,
			Doc: "the path probe: heap allocations (tiny ones included) of the process that claims and completes, per job claimed and completed, as a worker process runs it"})
}

// pathScripts names the scripts a path's window ran, most called first.
func pathScripts(r *summary.RunSummary, path string) string {
	if r == nil || r.Probe == nil {
		return ""
	}
	s := r.Probe.Paths[path].Scripts
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if s[names[i]] != s[names[j]] {
			return s[names[i]] > s[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) == 0 {
		return ""
	}
	return "scripts: " + strings.Join(names, ", ")
}
