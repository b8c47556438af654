package rediscost

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/redis/go-redis/v9"
)

// DefaultSampleEvery is the MemorySampler interval used when none is given.
const DefaultSampleEvery = 100 * time.Millisecond

// MemorySampler polls used_memory on every node in the background and keeps
// the highest total seen. used_memory_peak alone cannot give this for a
// cluster (nodes peak at different times) nor for a window (it is the peak
// since start or the last reset).
type MemorySampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	peak    int64
	samples int64
	// cpu is every node's CPU (sys + user) at the last poll that read all
	// of them, in seconds: the per-second Redis CPU of the time series.
	cpu   float64
	cpuOK bool
	// cmds is every node's total_commands_processed at the last poll that
	// read all of them, less the sampler's own INFO calls.
	cmds   int64
	cmdsOK bool
	// used and rss are every node's used_memory and used_memory_rss at
	// the last poll that read all of them.
	used, rss int64
	// evicted is every node's evicted_keys at the last complete poll.
	evicted int64
	err     error // first poll error, for Err

	meters  []*meter
	clients []*redis.Client
}

// StartMemorySampler starts polling INFO memory on every address every
// interval (DefaultSampleEvery if every <= 0), summing used_memory over the
// nodes at each poll. It polls once at once, then on every tick, until Stop
// or until ctx ends. Each node gets one connection of the sampler's own for
// its lifetime.
//
// Its INFO calls are left out of a Diff by name; its bytes and its
// connections' handshake are not, because they happen between snapshots.
// For exact numbers start it after the before snapshot, Stop it before the
// after snapshot, and subtract: Diff(before, after).Without(s.Overhead()).
// Poll errors (a node paused by fault injection, say) do not stop it: the
// poll is skipped and Err reports the first one.
func StartMemorySampler(ctx context.Context, addrs []string, auth rclient.Auth, every time.Duration) *MemorySampler {
	if every <= 0 {
		every = DefaultSampleEvery
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &MemorySampler{cancel: cancel, done: make(chan struct{})}
	for _, addr := range addrs {
		m := newMeter()
		s.meters = append(s.meters, m)
		s.clients = append(s.clients, newClient(addr, auth, m))
	}
	go s.run(ctx, every)
	return s
}

func (s *MemorySampler) run(ctx context.Context, every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.poll(ctx, every)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads every node once; a total is kept only if every node answered,
// since a partial sum would understate the peak.
func (s *MemorySampler) poll(ctx context.Context, every time.Duration) {
	// Bound one poll by the interval (at least the I/O timeout would be
	// too long: a paused node must not stall the sampler for seconds).
	pctx, cancel := context.WithTimeout(ctx, max(every, 50*time.Millisecond))
	defer cancel()
	var total, rss, cmds, evicted int64
	var cpu float64
	cpuOK, cmdsOK := true, true
	var errs []error
	for _, c := range s.clients {
		text, err := c.Info(pctx, "memory", "cpu", "stats").Result()
		if err == nil {
			var used int64
			if used, err = parseUsedMemory(text); err == nil {
				total += used
				r, _ := InfoInt(text, "used_memory_rss")
				rss += r
				ev, _ := InfoInt(text, "evicted_keys")
				evicted += ev
				n, ok := parseUsedCPU(text)
				cpu, cpuOK = cpu+n, cpuOK && ok
				k, ok := InfoInt(text, "total_commands_processed")
				cmds, cmdsOK = cmds+k, cmdsOK && ok
				continue
			}
		}
		errs = append(errs, fmt.Errorf("rediscost: sample %s: %w", c.Options().Addr, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(errs) > 0 {
		if s.err == nil && ctx.Err() == nil {
			s.err = errors.Join(errs...)
		}
		return
	}
	s.samples++
	s.peak = max(s.peak, total)
	s.used, s.rss, s.evicted = total, rss, evicted
	s.cpu, s.cpuOK = cpu, cpuOK
	// Each poll so far was one INFO per node: not the jobs' commands.
	s.cmds, s.cmdsOK = cmds-s.samples*int64(len(s.clients)), cmdsOK
}

// Memory is every node's used_memory and used_memory_rss at the last
// complete poll (false before one): memory over time, and its
// fragmentation (rss / used).
func (s *MemorySampler) Memory() (used, rss int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.rss, s.samples > 0
}

// Evicted is every node's INFO evicted_keys at the last complete poll
// (false before one): what Redis evicted at maxmemory, over time.
func (s *MemorySampler) Evicted() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted, s.samples > 0
}

// Commands is every node's commands processed at the last complete poll,
// the sampler's own INFO calls left out; false before one, or where INFO
// stats is not readable.
func (s *MemorySampler) Commands() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmds, s.cmdsOK && s.samples > 0
}

// CPU is every node's CPU time (sys + user) at the last complete poll;
// false before one, or where INFO cpu is not readable.
func (s *MemorySampler) CPU() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.cpu * float64(time.Second)), s.cpuOK && s.samples > 0
}

// Stop ends sampling, closes the sampler's connections and returns the
// peak total used_memory in bytes (0 if no poll succeeded). Later calls
// return the same peak.
func (s *MemorySampler) Stop() int64 {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		for _, c := range s.clients {
			_ = c.Close() // nothing to report: the samples are already taken
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Samples is the number of complete polls so far.
func (s *MemorySampler) Samples() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// Err returns the first poll error, or nil.
func (s *MemorySampler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Overhead is the traffic the sampler's connections put on Redis so far,
// summed over nodes: call it after Stop for the final figure, and pass it
// to Cost.Without.
func (s *MemorySampler) Overhead() Overhead {
	o := Overhead{Calls: map[string]int64{}}
	for _, m := range s.meters {
		mo, _ := m.snapshot()
		o = o.add(mo)
	}
	return o
}
