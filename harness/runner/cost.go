package runner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/summary"
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
	password  string
	owned     bool
	retention time.Duration

	base, before rediscost.Snapshot
	sampler      *rediscost.MemorySampler
	rep          *engine.CostReport
}

func newRedisCost(addrs []string, password string, owned bool, retention time.Duration) engine.CostMeter {
	return &redisCost{addrs: addrs, password: password, owned: owned, retention: retention}
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
		if err := rediscost.ResetStats(cctx, m.live(), m.password); err != nil {
			return err
		}
	}
	var err error
	m.base, err = rediscost.Take(cctx, m.live(), m.password)
	return err
}

// mark takes the window's first snapshot, then starts the memory sampler,
// in the order rediscost documents for subtracting the sampler exactly.
func (m *redisCost) Mark(ctx context.Context) error {
	cctx, cancel := costCtx(ctx)
	defer cancel()
	var err error
	if m.before, err = rediscost.Take(cctx, m.live(), m.password); err != nil {
		return err
	}
	m.sampler = rediscost.StartMemorySampler(context.WithoutCancel(ctx), m.live(), m.password, 100*time.Millisecond)
	return nil
}

// end stops the sampler, takes the last snapshot and divides.
func (m *redisCost) End(ctx context.Context, jobs, acked int64) error {
	if m.sampler == nil {
		return nil
	}
	peak := m.sampler.Stop()
	if len(m.live()) < len(m.addrs) {
		// The queue's master died in the window and a replica took its
		// slots: neither end of the window covers both.
		m.rep = &engine.CostReport{Jobs: jobs, Error: "not measured: a master_kill changed the masters during the window"}
		return nil
	}
	cctx, cancel := costCtx(ctx)
	defer cancel()
	after, err := rediscost.Take(cctx, m.live(), m.password)
	if err != nil {
		m.rep = &engine.CostReport{Error: err.Error()}
		return err
	}
	c := rediscost.Diff(m.before, after).Without(m.sampler.Overhead())
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
	if err := m.sampler.Err(); err != nil {
		r.Error = "memory sampler: " + err.Error()
	}
	m.rep = r
	return nil
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
		"redis cpu %", "peak mem", "mem/job", "top commands per job"}
	var rows [][]string
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
			fmt.Sprintf("%.0f%%", c.RedisCPUPercent), fmtBytes(float64(c.PeakMemoryBytes)),
			fmtBytes(c.MemoryPerJobBytes), topCommands(c.CommandsByName, 3)})
	}
	title := "Redis cost per job (INFO deltas over the measured window; Redis shares the CPUs with the harness):"
	if len(runs) > 0 && runs[0].ResolutionNs > 0 {
		// Cost is measured on the wall clock, per job: not stretched like
		// the latencies (scenarios/README.md, Simulated time).
		title = "Redis cost per job, in real time (INFO deltas over the measured window, per job completed in it; Redis CPU % of one real second; " +
			"not scaled by the speed; Redis shares the CPUs with the harness):"
	}
	fmt.Fprintln(w, title)
	_ = report.Table(w, header, rows)
}

func topCommands(m map[string]float64, n int) string {
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
		out += fmt.Sprintf("%s %.2f", e.k, e.v)
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
