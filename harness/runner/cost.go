package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
	"github.com/aebench/aebench/report"
)

// costTimeout bounds each INFO round; the snapshots run on a context Ctrl-C
// does not cancel, so an interrupted run still gets its cost.
const costTimeout = 5 * time.Second

// redisCost implements CostMeter with package rediscost.
type redisCost struct {
	mu        sync.Mutex
	gone      map[string]bool // nodes a fault killed for good (master_kill)
	addrs     []string
	auth      rclient.Auth
	owned     bool
	retention time.Duration

	// cg counts Redis's instructions over the window (redis.meter
	// instructions); nil otherwise.
	cg *rediscost.Callgrind

	base, before rediscost.Snapshot
	marked       bool
	sampler      *rediscost.MemorySampler
	rep          *engine.CostReport
}

func newRedisCost(addrs []string, auth rclient.Auth, owned bool, retention time.Duration, cg *rediscost.Callgrind) engine.CostMeter {
	return &redisCost{addrs: addrs, auth: auth, owned: owned, retention: retention, cg: cg}
}

// forget leaves a node a fault killed out of the snapshots from now on:
// Diff then counts the nodes both ends have.
func (m *redisCost) forget(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone == nil {
		m.gone = map[string]bool{}
	}
	m.gone[addr] = true
}

// live is addrs without the forgotten nodes.
func (m *redisCost) live() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, a := range m.addrs {
		if !m.gone[a] {
			out = append(out, a)
		}
	}
	return out
}

func costCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), costTimeout)
}

// begin resets a spawned server's statistics (never a user's: its
// counters are not ours to erase) and takes the empty-queue baseline.
func (m *redisCost) Begin(ctx context.Context) error {
	cctx, cancel := costCtx(ctx)
	defer cancel()
	if m.owned {
		if err := rediscost.ResetStats(cctx, m.live(), m.auth); err != nil {
			return err
		}
	}
	var err error
	m.base, err = rediscost.Take(cctx, m.live(), m.auth)
	return err
}

// mark takes the window's first snapshot, then starts the memory sampler,
// in the order rediscost documents for subtracting the sampler exactly.
// Under callgrind the sampler is not started (its INFO every 100ms is work
// that grows with the window's length, which valgrind stretches) and
// instrumentation starts last.
func (m *redisCost) Mark(ctx context.Context) error {
	cctx, cancel := costCtx(ctx)
	defer cancel()
	var err error
	if m.before, err = rediscost.Take(cctx, m.live(), m.auth); err != nil {
		return err
	}
	m.marked = true
	if m.cg != nil {
		return m.cg.Start(cctx)
	}
	m.sampler = rediscost.StartMemorySampler(context.WithoutCancel(ctx), m.live(), m.auth, 100*time.Millisecond)
	return nil
}

// end stops the sampler (or dumps callgrind's count), takes the last
// snapshot and divides.
func (m *redisCost) End(ctx context.Context, jobs, acked int64) error {
	if !m.marked {
		return nil
	}
	var peak int64
	var prof *rediscost.Profile
	var profErr error
	if m.cg != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		p, err := m.cg.Stop(cctx)
		cancel()
		prof, profErr = &p, err
	} else {
		peak = m.sampler.Stop()
	}
	if len(m.live()) < len(m.addrs) {
		// The queue's master died in the window and a replica took its
		// slots: neither end of the window covers both.
		m.rep = &engine.CostReport{Jobs: jobs, Error: "not measured: a master_kill changed the masters during the window"}
		return nil
	}
	cctx, cancel := costCtx(ctx)
	defer cancel()
	after, err := rediscost.Take(cctx, m.live(), m.auth)
	if err != nil {
		m.rep = &engine.CostReport{Error: err.Error()}
		return err
	}
	c := rediscost.Diff(m.before, after)
	if m.sampler != nil {
		c = c.Without(m.sampler.Overhead())
	}
	if len(c.Restarted) > 0 {
		m.rep = &engine.CostReport{Jobs: jobs, Error: fmt.Sprintf("not measured: Redis %s restarted during the window, so its counters started again from zero",
			strings.Join(c.Restarted, ", "))}
		return nil
	}
	r := m.report(c, after, jobs, acked, peak)
	if m.sampler != nil {
		if err := m.sampler.Err(); err != nil {
			r.Error = "memory sampler: " + err.Error()
		}
	}
	if profErr != nil {
		r.Error = strings.Join(slices.DeleteFunc([]string{r.Error, "instructions: " + profErr.Error()}, func(e string) bool { return e == "" }), "; ")
	} else if prof != nil {
		// FUNCTION LOAD is set-up, once per client process (a worker
		// replaced after a kill loads again), not a job's work: in a
		// whole-run window it was 7% of zset's count.
		setInstructions(r, prof.Split("info", "functionload"), jobs)
	}
	m.rep = r
	return nil
}

// report divides the window's INFO deltas c (the counters ending at after)
// by the jobs it completed, and the memory growth since the empty queue by
// the jobs acknowledged.
func (m *redisCost) report(c rediscost.Cost, after rediscost.Snapshot, jobs, acked, peak int64) *engine.CostReport {
	pj := c.PerJob(jobs)
	window := after.Taken.Sub(m.before.Taken)
	whole := rediscost.Diff(m.base, after)
	var baseMem int64
	for _, n := range m.base.Nodes {
		baseMem += n.UsedMemory
	}
	r := &engine.CostReport{Jobs: jobs, WindowS: window.Seconds(),
		Commands: pj.Commands, RedisCPUMicros: pj.RedisCPUMicros, CommandMicros: pj.CommandMicros,
		NetInBytes: pj.NetInBytes, NetOutBytes: pj.NetOutBytes, NetBytes: pj.NetInBytes + pj.NetOutBytes, CommandsByName: map[string]float64{}, CommandMicrosByName: map[string]float64{},
		PeakMemoryBytes: peak, BaselineMemory: baseMem, MemoryDeltaBytes: whole.MemoryDelta,
		MemoryNote: fmt.Sprintf("used_memory growth since the empty queue, divided by the %d jobs acknowledged so far: "+
			"finished records stay for store.retention (%s), so this is the footprint of a job record plus its index entries", acked, m.retention)}
	if window > 0 {
		r.RedisCPUPercent = 100 * c.RedisCPU.Seconds() / window.Seconds()
	}
	r.Masters = len(c.CPUByNode)
	var busiest time.Duration
	for _, d := range c.CPUByNode {
		busiest = max(busiest, d)
	}
	if jobs > 0 {
		r.BusiestMasterCPUMicros = float64(busiest.Microseconds()) / float64(jobs)
	}
	if window > 0 {
		r.BusiestMasterPercent = 100 * busiest.Seconds() / window.Seconds()
	}
	if jobs > 0 {
		for name, n := range c.CommandsByName {
			r.CommandsByName[name] = float64(n) / float64(jobs)
		}
		for name, us := range c.UsecByName {
			r.CommandMicrosByName[name] = float64(us) / float64(jobs)
		}
	}
	if acked > 0 {
		r.MemoryPerJobBytes = float64(whole.MemoryDelta) / float64(acked)
		r.KeysPerJob = float64(whole.KeysDelta) / float64(acked)
	}
	return r
}

// setInstructions divides a callgrind window by the jobs it completed.
func setInstructions(r *engine.CostReport, c rediscost.Costs, jobs int64) {
	if jobs <= 0 {
		return
	}
	j := float64(jobs)
	r.Instructions = float64(c.Work) / j
	r.CommandInstructions = float64(c.CommandWork) / j
	r.InstructionsByCommand = map[string]float64{}
	for name, n := range c.Commands {
		r.InstructionsByCommand[name] = float64(n) / j
	}
}

func (m *redisCost) Finish() *engine.CostReport {
	if m.sampler != nil {
		m.sampler.Stop()
	}
	return m.rep
}

// costTable prints Redis's cost per job for each run of a cell.
func (pr *planRunner) costTable(w io.Writer, runs []summary.RunSummary) {
	header := []string{"backend", "cmds/job", "redis cpu/job", "in cmds/job", "net in/job", "net out/job",
		"redis cpu %", "peak mem", "mem/job"}
	var rows [][]string
	var tops []string
	for _, r := range runs {
		c := r.Cost
		if c == nil || c.Error != "" && c.Commands == 0 {
			why := "n/a"
			if c != nil {
				why += " (" + c.Error + ")"
			}
			rows = append(rows, []string{runName(r, pr.s.Repeats), why})
			continue
		}
		rows = append(rows, []string{runName(r, pr.s.Repeats), fmt.Sprintf("%.2f", c.Commands),
			fmt.Sprintf("%.1fµs", c.RedisCPUMicros), fmt.Sprintf("%.1fµs", c.CommandMicros),
			fmt.Sprintf("%.0fB", c.NetInBytes), fmt.Sprintf("%.0fB", c.NetOutBytes),
			fmt.Sprintf("%.0f%%", c.RedisCPUPercent), peakText(c.PeakMemoryBytes),
			fmtBytes(c.MemoryPerJobBytes)})
		tops = append(tops, fmt.Sprintf("  %s: %s", runName(r, pr.s.Repeats), topCommands(c.CommandsByName, 4)))
	}
	title := "Redis cost per job (INFO deltas over the measured window; Redis shares the CPUs with the harness):"
	if len(runs) > 0 && runs[0].ResolutionNs > 0 {
		// Cost is measured on the wall clock, per job: not stretched like
		// the latencies (scenarios/README.md, Simulated time).
		title = "Redis cost per job, in real time (INFO deltas over the measured window, per job completed in it; Redis CPU % of one real second; " +
			"not scaled by the speed; Redis shares the CPUs with the harness):"
	}
	if len(runs) > 0 && runs[0].Redis != nil && runs[0].Redis.Meter != "" {
		title = "Redis cost per job (INFO deltas over the whole run, warm-up and drain included, per job completed; Redis under callgrind):"
	}
	fmt.Fprintln(w, title)
	_ = report.Table(w, header, rows)
	if len(tops) > 0 {
		fmt.Fprintln(w, "top commands per job:")
		for _, t := range tops {
			fmt.Fprintln(w, t)
		}
	}
	instructionsTable(w, runs, pr.s.Repeats)
}

// peakText is the sampled peak, or "-" where nothing sampled it (under
// callgrind the sampler is off).
func peakText(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmtBytes(float64(b))
}

// instructionsTable prints, for runs whose Redis ran under callgrind, the
// instructions Redis executed per job, in all and by command.
func instructionsTable(w io.Writer, runs []summary.RunSummary, repeats int) {
	var rows [][]string
	for _, r := range runs {
		if c := r.Cost; c != nil && c.Instructions > 0 {
			rows = append(rows, []string{runName(r, repeats), fmt.Sprintf("%.0f", c.Instructions),
				fmt.Sprintf("%.0f", c.CommandInstructions), topCommandsFmt(c.InstructionsByCommand, 4, "%.0f")})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "Redis instructions per job (callgrind over the whole run, warm-up and drain included, divided by every job completed; without serverCron, the meter's INFO and FUNCTION LOAD; "+
		"counted, not timed: README \"The deterministic gate\" gives its noise; the run's timings are valgrind's, about 50x slow):")
	_ = report.Table(w, []string{"backend", "instr/job", "in commands/job", "top commands (instructions per job, inclusive)"}, rows)
	seen := map[string]bool{}
	for _, r := range runs {
		if r.CountNoise > 0 && !seen[r.Backend] {
			seen[r.Backend] = true
			fmt.Fprintf(w, "%s declares that its counted costs per job move up to %.0f%% between runs of one plan: %s; compare gates them no tighter.\n",
				r.Backend, 100*r.CountNoise, r.CountNoiseWhy)
		}
	}
}

func topCommands(m map[string]float64, n int) string { return topCommandsFmt(m, n, "%.2f") }

func topCommandsFmt(m map[string]float64, n int, format string) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	out := ""
	for i, e := range all {
		if i == n {
			break
		}
		if out != "" {
			out += " "
		}
		out += e.k + " " + fmt.Sprintf(format, e.v)
	}
	return out
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1fGiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1fMiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fKiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0fB", b)
}
