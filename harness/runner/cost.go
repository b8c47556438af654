package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
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
	rep          *summary.CostReport
	// running is the sampler, for the collector's reads of Redis's
	// CPU each second (another goroutine than Mark's and End's).
	running atomic.Pointer[rediscost.MemorySampler]
}

// RedisCPU is every node's CPU time at the sampler's last poll: the
// per-second Redis CPU of the time series (false outside the window, or
// under callgrind, where no sampler runs).
func (m *redisCost) RedisCPU() (time.Duration, bool) {
	if s := m.running.Load(); s != nil {
		return s.CPU()
	}
	return 0, false
}

// RedisMemory is every node's used and resident memory at the sampler's
// last poll (false where RedisCPU is).
func (m *redisCost) RedisMemory() (used, rss int64, ok bool) {
	if s := m.running.Load(); s != nil {
		return s.Memory()
	}
	return 0, 0, false
}

// RedisEvicted is every node's evicted_keys at the sampler's last poll
// (false where RedisCPU is).
func (m *redisCost) RedisEvicted() (int64, bool) {
	if s := m.running.Load(); s != nil {
		return s.Evicted()
	}
	return 0, false
}

// RedisCommands is every node's commands processed at the sampler's last
// poll, its own left out (false where RedisCPU is).
func (m *redisCost) RedisCommands() (int64, bool) {
	if s := m.running.Load(); s != nil {
		return s.Commands()
	}
	return 0, false
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
	m.running.Store(m.sampler)
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
		m.running.Store(nil)
		peak = m.sampler.Stop()
	}
	if len(m.live()) < len(m.addrs) {
		// The queue's master died in the window and a replica took its
		// slots: neither end of the window covers both.
		m.rep = &summary.CostReport{Jobs: jobs, Error: "not measured: a master_kill changed the masters during the window"}
		return nil
	}
	cctx, cancel := costCtx(ctx)
	defer cancel()
	after, err := rediscost.Take(cctx, m.live(), m.auth)
	if err != nil {
		m.rep = &summary.CostReport{Error: err.Error()}
		return err
	}
	c := rediscost.Diff(m.before, after)
	if m.sampler != nil {
		c = c.Without(m.sampler.Overhead())
	}
	if len(c.Restarted) > 0 {
		m.rep = &summary.CostReport{Jobs: jobs, Error: fmt.Sprintf("not measured: Redis %s restarted during the window, so its counters started again from zero",
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
func (m *redisCost) report(c rediscost.Cost, after rediscost.Snapshot, jobs, acked, peak int64) *summary.CostReport {
	pj := c.PerJob(jobs)
	window := after.Taken.Sub(m.before.Taken)
	whole := rediscost.Diff(m.base, after)
	var baseMem int64
	for _, n := range m.base.Nodes {
		baseMem += n.UsedMemory
	}
	r := &summary.CostReport{Jobs: jobs, WindowS: window.Seconds(),
		Commands: pj.Commands, RedisCPUMicros: pj.RedisCPUMicros, CommandMicros: pj.CommandMicros,
		NetInBytes: pj.NetInBytes, NetOutBytes: pj.NetOutBytes, NetBytes: pj.NetInBytes + pj.NetOutBytes, CommandsByName: map[string]float64{}, CommandMicrosByName: map[string]float64{},
		PeakMemoryBytes: peak, BaselineMemory: baseMem, MemoryDeltaBytes: whole.MemoryDelta, EvictedKeys: whole.EvictedKeys,
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
func setInstructions(r *summary.CostReport, c rediscost.Costs, jobs int64) {
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

func (m *redisCost) Finish() *summary.CostReport {
	if m.sampler != nil {
		m.sampler.Stop()
	}
	return m.rep
}
