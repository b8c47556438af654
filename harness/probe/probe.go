// Package probe measures each path a job can take through a store, one
// window at a time, on a Redis under callgrind: what the deterministic gate
// (scenarios/ci-cost.yaml) needs beside its whole-run count. In a whole run
// at ci-cost's rate most jobs are handed to an idle claimer inside their
// enqueue, so a regression on the pop path or in recovery is diluted 4-8x
// (and recovery, a few jobs a kill, 50x); here each path has its own window
// and its own count per job, and the scripts it ran are named.
//
// The windows, in order, each over Options.Jobs jobs (fewer where said):
//   - enqueue: one Enqueue call a due job, no claimer waiting;
//   - pop: one Claim (Max 1, no wait) a job, from that backlog;
//   - complete: one Complete a claimed job;
//   - handoff: a claimer blocked in Redis, then one Enqueue, until the
//     claimer returns the job (half of Jobs);
//   - fail: one Fail a claimed job with a retry left (half of Jobs);
//   - recover: Recover calls until every lease let lapse is taken back
//     (half of Jobs, 200 ms leases, called 300 ms after they lapsed);
//   - delayed: one Enqueue a job due in an hour (a quarter of Jobs).
//
// Between windows callgrind's instrumentation is off, so set-up (claiming
// the jobs a fail window fails) costs nothing. After the enqueue window,
// MEMORY USAGE of every key gives the bytes Redis holds a job; over the pop
// and complete windows, this process's allocations give a claimed job's
// client cost. Job payloads cycle through 64-319 bytes, so the allocator's
// size classes average out and a few more bytes a job show as about that.
package probe

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
)

// DefaultJobs is the jobs of a full window: enough that a script's fixed
// cost (its call, the library's lookup) is spread, few enough that the
// probe takes seconds under callgrind.
const DefaultJobs = 300

// leaseLapse is the lease of the recover window's claims: the probe waits
// it out, plus recoverSlack, before the window opens.
const (
	leaseLapse   = 200 * time.Millisecond
	recoverSlack = 300 * time.Millisecond
	parkTimeout  = 10 * time.Second
)

// Options say what to probe.
type Options struct {
	// Store was built on Client, on a queue nothing else uses.
	Store  jobstore.Store
	Client *Counting
	// Meter is the callgrind of the Redis at Addrs; nil counts commands
	// only (the tests, and a Redis without valgrind).
	Meter *rediscost.Callgrind
	Addrs []string
	Auth  rclient.Auth
	// Jobs per full window; 0 is DefaultJobs.
	Jobs int
}

type prober struct {
	o      Options
	res    *summary.PathProbe
	leases []jobstore.Lease
	seq    int
}

// Run runs the windows in order. A window that fails ends the probe, its
// error in the result's Error; the windows before it stand.
func Run(ctx context.Context, o Options) *summary.PathProbe {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	p := &prober{o: o, res: &summary.PathProbe{Jobs: o.Jobs, Paths: map[string]summary.PathCost{}}}
	steps := []func(context.Context) error{p.enqueue, p.stored, p.popAndComplete, p.handoff, p.fail, p.recover, p.delayed}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			p.res.Error = err.Error()
			break
		}
	}
	return p.res
}

// window measures run (which returns the jobs it moved) as path name.
func (p *prober) window(ctx context.Context, name string, run func(context.Context) (int64, error)) error {
	p.o.Client.take()
	before, err := rediscost.Take(ctx, p.o.Addrs, p.o.Auth)
	if err != nil {
		return fmt.Errorf("probe %s: %w", name, err)
	}
	if p.o.Meter != nil {
		if err := p.o.Meter.Start(ctx); err != nil {
			return fmt.Errorf("probe %s: %w", name, err)
		}
	}
	n, runErr := run(ctx)
	var prof rediscost.Profile
	if p.o.Meter != nil {
		prof, err = p.o.Meter.Stop(ctx)
	}
	if runErr != nil {
		return fmt.Errorf("probe %s: %w", name, runErr)
	}
	if err != nil {
		return fmt.Errorf("probe %s: %w", name, err)
	}
	after, err := rediscost.Take(ctx, p.o.Addrs, p.o.Auth)
	if err != nil {
		return fmt.Errorf("probe %s: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("probe %s: the window moved no job", name)
	}
	c := rediscost.Diff(before, after)
	costs := prof.Split("info")
	pc := summary.PathCost{Jobs: n, Instructions: float64(costs.Work) / float64(n),
		CommandInstructions: float64(costs.CommandWork) / float64(n),
		Commands:            float64(c.Commands) / float64(n), Scripts: map[string]float64{}}
	for s, calls := range p.o.Client.take() {
		pc.Scripts[scriptName(s)] += float64(calls) / float64(n)
	}
	p.res.Paths[name] = pc
	return nil
}

// scriptName drops a library's prefix from a function's name
// ("aebench_e466332446214172_claim" is claim): the prefix is a hash of the
// library's source, which any change to a script changes.
func scriptName(fn string) string {
	if rest, ok := strings.CutPrefix(fn, "aebench_"); ok {
		if i := strings.IndexByte(rest, '_'); i > 0 {
			return rest[i+1:]
		}
	}
	return fn
}

// job is the probe's next job: its payload cycles through 64-319 bytes.
func (p *prober) job(runAt time.Time) jobstore.NewJob {
	p.seq++
	size := 64 + p.seq%256
	return jobstore.NewJob{ID: "probe-" + strconv.Itoa(p.seq), Name: "probe", Payload: []byte(strings.Repeat("x", size)),
		MaxRetries: 1, RunAt: runAt}
}

func (p *prober) enqueueN(ctx context.Context, n int, runAt time.Time) (int64, error) {
	for range n {
		if err := p.o.Store.Enqueue(ctx, p.job(runAt)); err != nil {
			return 0, err
		}
	}
	return int64(n), nil
}

func (p *prober) enqueue(ctx context.Context) error {
	return p.window(ctx, "enqueue", func(ctx context.Context) (int64, error) {
		return p.enqueueN(ctx, p.o.Jobs, time.Time{})
	})
}

// delayed runs last: a pure stream keeps delayed jobs in its stream, and a
// waiting claim there re-reads them rather than block.
func (p *prober) delayed(ctx context.Context) error {
	return p.window(ctx, "delayed", func(ctx context.Context) (int64, error) {
		return p.enqueueN(ctx, p.o.Jobs/4, time.Now().Add(time.Hour))
	})
}

// stored sums MEMORY USAGE over every key after the enqueue window: the
// Redis holds only this probe's queue (the runner flushed it), its due
// jobs' records and indexes. Records (hashes and strings) are counted
// apart: their bytes repeat exactly, where an index's do not (a sorted
// set's skiplist levels are Redis's random draws, a stream's nodes depend
// on the IDs' milliseconds).
func (p *prober) stored(ctx context.Context) error {
	var total, records int64
	cursor := "0"
	for {
		v, err := p.o.Client.Do(ctx, rclient.Command{Head: []string{"SCAN", cursor, "COUNT", "1000"}})
		if err != nil {
			return fmt.Errorf("probe stored bytes: SCAN: %w", err)
		}
		next, keys, err := scanReply(v)
		if err != nil {
			return fmt.Errorf("probe stored bytes: %w", err)
		}
		for _, k := range keys {
			n, typ, err := p.keyBytes(ctx, k)
			if err != nil {
				return fmt.Errorf("probe stored bytes: %s: %w", k, err)
			}
			total += n
			if typ == "hash" || typ == "string" {
				records += n
			}
		}
		if cursor = next; cursor == "0" {
			break
		}
	}
	p.res.StoredBytesPerJob = float64(total) / float64(p.o.Jobs)
	p.res.RecordBytesPerJob = float64(records) / float64(p.o.Jobs)
	return nil
}

// keyBytes is MEMORY USAGE of key k, every element counted, and its type.
//
// A hash that outgrew its table may still be rehashing, holding both
// tables: each lookup moves one bucket, and how many lookups a hash got
// after it grew depends on how its fields fell into buckets, which Redis
// seeds at random per process (the same record measured 552 and 584
// bytes). So a hash gets lookups first, enough to finish a small table's
// rehash: its bytes then repeat exactly.
func (p *prober) keyBytes(ctx context.Context, k string) (int64, string, error) {
	t, err := p.o.Client.Do(ctx, rclient.Cmd("TYPE", k))
	if err != nil {
		return 0, "", err
	}
	typ, _ := t.(string)
	if typ == "hash" {
		lookups := make([]rclient.Command, rehashLookups)
		for i := range lookups {
			lookups[i] = rclient.Cmd("HEXISTS", k, "-")
		}
		for _, r := range p.o.Client.DoMulti(ctx, lookups...) {
			if r.Err != nil {
				return 0, "", r.Err
			}
		}
	}
	u, err := p.o.Client.Do(ctx, rclient.Command{Head: []string{"MEMORY", "USAGE"}, Keys: []string{k}, Args: []string{"SAMPLES", "0"}})
	if err != nil {
		return 0, "", err
	}
	n, _ := u.(int64)
	return n, typ, nil
}

// rehashLookups finishes the rehash of a table of up to 16 buckets.
const rehashLookups = 16

func scanReply(v any) (string, []string, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return "", nil, fmt.Errorf("SCAN replied %T", v)
	}
	cur, _ := a[0].(string)
	items, _ := a[1].([]any)
	keys := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			keys = append(keys, s)
		}
	}
	return cur, keys, nil
}

// claimN claims n jobs one Claim each, keeping their leases.
func (p *prober) claimN(ctx context.Context, n int, lease time.Duration) (int64, error) {
	for i := range n {
		cs, err := p.o.Store.Claim(ctx, jobstore.ClaimRequest{WorkerID: "probe", Max: 1, Lease: lease})
		if err != nil {
			return 0, err
		}
		if len(cs) != 1 {
			return 0, fmt.Errorf("claim %d of %d returned %d jobs", i+1, n, len(cs))
		}
		p.leases = append(p.leases, cs[0].Lease)
	}
	return int64(n), nil
}

func (p *prober) completeAll(ctx context.Context) (int64, error) {
	for _, l := range p.leases {
		if err := p.o.Store.Complete(ctx, l, nil); err != nil {
			return 0, err
		}
	}
	n := int64(len(p.leases))
	p.leases = p.leases[:0]
	return n, nil
}

// popAndComplete claims the enqueue window's jobs and completes them,
// counting this process's allocations over both loops (not the windows'
// own INFO and callgrind_control).
func (p *prober) popAndComplete(ctx context.Context) error {
	var allocs uint64
	counted := func(f func(context.Context) (int64, error)) func(context.Context) (int64, error) {
		return func(ctx context.Context) (int64, error) {
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			n, err := f(ctx)
			runtime.ReadMemStats(&b)
			allocs += b.Mallocs - a.Mallocs
			return n, err
		}
	}
	if err := p.window(ctx, "pop", counted(func(ctx context.Context) (int64, error) {
		return p.claimN(ctx, p.o.Jobs, time.Minute)
	})); err != nil {
		return err
	}
	if err := p.window(ctx, "complete", counted(p.completeAll)); err != nil {
		return err
	}
	p.res.ClientAllocsPerClaimedJob = float64(allocs) / float64(p.o.Jobs)
	return nil
}

// handoff enqueues each job while a claimer is blocked in Redis waiting
// for work, and waits for the claimer to return it. A store whose claims
// poll has no hand-off: the path is left out.
func (p *prober) handoff(ctx context.Context) error {
	if !p.o.Store.Capabilities().Has(jobstore.CapBlockingClaim) {
		return nil
	}
	err := p.window(ctx, "handoff", func(ctx context.Context) (int64, error) {
		for i := range p.o.Jobs / 2 {
			if err := p.handOne(ctx); err != nil {
				return 0, fmt.Errorf("job %d: %w", i+1, err)
			}
		}
		return int64(p.o.Jobs / 2), nil
	})
	if err != nil {
		return err
	}
	_, err = p.completeAll(ctx)
	return err
}

// handOne starts a waiting claim, waits until it blocks in Redis, enqueues
// one job and waits for the claim to return it. A claim that never blocks
// is cancelled before handOne returns, so it takes no later window's job.
func (p *prober) handOne(ctx context.Context) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan error, 1)
	go func() {
		cs, err := p.o.Store.Claim(cctx, jobstore.ClaimRequest{WorkerID: "probe", Max: 1, Lease: time.Minute, Wait: parkTimeout})
		if err == nil && len(cs) != 1 {
			err = fmt.Errorf("the waiting claim returned %d jobs", len(cs))
		}
		if err == nil {
			p.leases = append(p.leases, cs[0].Lease)
		}
		got <- err
	}()
	if err := p.parked(ctx); err != nil {
		cancel()
		<-got
		return err
	}
	if err := p.o.Store.Enqueue(ctx, p.job(time.Time{})); err != nil {
		cancel()
		<-got
		return err
	}
	return <-got
}

// parked waits until a client is blocked in Redis: the claimer is waiting
// (its INFO is left out of the window's counts by name).
func (p *prober) parked(ctx context.Context) error {
	deadline := time.Now().Add(parkTimeout)
	for {
		v, err := p.o.Client.Do(ctx, rclient.Command{Head: []string{"INFO", "clients"}})
		if err != nil {
			return err
		}
		if s, _ := v.(string); infoInt(s, "blocked_clients") > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("no claimer blocked in Redis within 10s (a store that polls has no hand-off to probe)")
		}
		time.Sleep(time.Millisecond)
	}
}

func infoInt(s, field string) int64 {
	n, _ := rediscost.InfoInt(s, field)
	return n
}

// fail fails claimed jobs that have a retry left.
func (p *prober) fail(ctx context.Context) error {
	n := p.o.Jobs / 2
	if _, err := p.enqueueN(ctx, n, time.Time{}); err != nil {
		return fmt.Errorf("probe fail: %w", err)
	}
	if _, err := p.claimN(ctx, n, time.Minute); err != nil {
		return fmt.Errorf("probe fail: %w", err)
	}
	return p.window(ctx, "fail", func(ctx context.Context) (int64, error) {
		for _, l := range p.leases {
			if _, err := p.o.Store.Fail(ctx, l, "probe"); err != nil {
				return 0, err
			}
		}
		p.leases = p.leases[:0]
		return int64(n), nil
	})
}

// recover lets leases lapse and takes the jobs back.
func (p *prober) recover(ctx context.Context) error {
	if !p.o.Store.Capabilities().Has(jobstore.CapLeaseRecovery) {
		return nil
	}
	n := p.o.Jobs / 2
	if err := p.drain(ctx); err != nil {
		return err
	}
	if _, err := p.enqueueN(ctx, n, time.Time{}); err != nil {
		return fmt.Errorf("probe recover: %w", err)
	}
	if _, err := p.claimN(ctx, n, leaseLapse); err != nil {
		return fmt.Errorf("probe recover: %w", err)
	}
	p.leases = p.leases[:0]
	time.Sleep(leaseLapse + recoverSlack)
	return p.window(ctx, "recover", func(ctx context.Context) (int64, error) {
		var got int64
		for tries := 0; got < int64(n); tries++ {
			r, err := p.o.Store.Recover(ctx, n)
			if err != nil {
				return got, err
			}
			got += int64(r.Len())
			if r.Len() == 0 {
				if tries > 50 {
					return got, fmt.Errorf("took back %d of %d lapsed leases", got, n)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		return got, nil
	})
}

// drain claims and completes what is due (the fail window's retries), so
// the recover window's claims take its own jobs.
func (p *prober) drain(ctx context.Context) error {
	for {
		cs, err := p.o.Store.Claim(ctx, jobstore.ClaimRequest{WorkerID: "probe", Max: 100, Lease: time.Minute})
		if err != nil {
			return fmt.Errorf("probe drain: %w", err)
		}
		if len(cs) == 0 {
			return nil
		}
		for _, c := range cs {
			if err := p.o.Store.Complete(ctx, c.Lease, nil); err != nil {
				return fmt.Errorf("probe drain: %w", err)
			}
		}
	}
}
