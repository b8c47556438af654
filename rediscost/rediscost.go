// Package rediscost measures what a benchmark run cost Redis itself:
// commands executed (by name), Redis CPU time, time spent inside commands,
// bytes in and out, and memory. The harness takes a Snapshot before and
// after the measured interval and Diffs them; dividing by the jobs done
// gives the per-job cost that makes backends comparable on a machine where
// Redis and the load generator share the cores.
//
// The numbers come from Redis's own counters: INFO commandstats (calls=,
// usec=), INFO cpu (used_cpu_sys, used_cpu_user), INFO stats
// (total_net_input_bytes, total_net_output_bytes), INFO memory and INFO
// keyspace, summed over every master of a cluster.
//
// The measurement keeps itself out of what it measures:
//   - it never uses the store's client: every snapshot opens its own
//     short-lived go-redis connection per node and closes it, so its commands
//     are not in the measured traffic's connection pool or pipelines;
//   - Diff drops every INFO call by name (its usec too): INFO is how this
//     package reads the counters, and job stores do not issue it per job;
//     CONFIG RESETSTAT (ResetStats) is dropped by name as well;
//   - everything else the measurement's connections sent (the client's
//     connection handshake, e.g. HELLO or AUTH) and every byte they moved is
//     metered on the socket and subtracted exactly, so a Diff of two
//     snapshots with nothing in between is zero commands and zero bytes;
//   - a MemorySampler's own traffic, and that of any snapshot taken between
//     before and after, is reported by their Overhead methods for
//     Cost.Without to subtract (see StartMemorySampler for the order).
//
// RedisCPU cannot be split by client: it includes the few microseconds the
// snapshots' own INFO calls took, and all of Redis's background work.
package rediscost

import (
	"context"
	"errors"
	"fmt"
	"github.com/aebench/aebench/rclient"
	"sync"
	"time"
)

// Snapshot is one INFO per node, taken at about the same time.
type Snapshot struct {
	Taken time.Time
	Nodes []NodeInfo
}

// NodeInfo is what one node's INFO said.
type NodeInfo struct {
	Addr string
	// Calls and UsecByCmd are INFO commandstats calls= and usec= by
	// command name as Redis files them ("evalsha", "client|setinfo").
	Calls     map[string]int64
	UsecByCmd map[string]int64
	// UsedCPUSys and UsedCPUUser are seconds of CPU the Redis process has
	// used (INFO cpu).
	UsedCPUSys, UsedCPUUser float64
	// NetInputBytes and NetOutputBytes are INFO stats total_net_input_bytes
	// and total_net_output_bytes.
	NetInputBytes, NetOutputBytes int64
	// UsedMemory and UsedMemoryPeak are INFO memory used_memory and
	// used_memory_peak, bytes.
	UsedMemory, UsedMemoryPeak int64
	// Keys is the total of keys= over the keyspace's databases.
	Keys int64
	// EvictedKeys is INFO stats evicted_keys: keys removed at maxmemory.
	EvictedKeys int64
	// RunID is INFO server run_id: a new one means the server restarted,
	// and every counter above started again from zero.
	RunID string

	// SelfIn is this snapshot's own traffic that these counters already
	// include: its connection handshake and its INFO request.
	SelfIn Overhead
	// SelfOut is this snapshot's own traffic that only later snapshots
	// count: the INFO reply and anything sent while closing.
	SelfOut Overhead
}

// Take reads INFO commandstats, cpu, stats, memory and keyspace from every
// address at once, each on its own short-lived go-redis connection: never
// the store's client, so the measurement is not part of the measured
// traffic, and its own bytes and handshake commands are metered so Diff can
// subtract them. It fails if any node cannot be read.
func Take(ctx context.Context, addrs []string, auth rclient.Auth) (Snapshot, error) {
	if len(addrs) == 0 {
		return Snapshot{}, errors.New("rediscost: no addresses")
	}
	snap := Snapshot{Taken: time.Now(), Nodes: make([]NodeInfo, len(addrs))}
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { snap.Nodes[i], errs[i] = takeNode(ctx, addr, auth) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// Overhead is all the traffic this snapshot's own connections put on the
// nodes. Diff subtracts the part that falls in its window by itself; pass
// this to Cost.Without for a snapshot taken between before and after (an
// intermediate reading), whose traffic lies wholly inside the window.
func (s Snapshot) Overhead() Overhead {
	o := Overhead{Calls: map[string]int64{}}
	for _, n := range s.Nodes {
		o = o.add(n.SelfIn).add(n.SelfOut)
	}
	return o
}

func takeNode(ctx context.Context, addr string, auth rclient.Auth) (NodeInfo, error) {
	m := newMeter()
	c := newClient(addr, auth, m)
	// One INFO call with several sections (Redis 7+), so the figures of a
	// node are taken at one instant.
	text, err := c.Info(ctx, "commandstats", "cpu", "stats", "memory", "keyspace", "server").Result()
	inAtInfo, _ := m.snapshot()
	closeErr := c.Close()
	if err != nil {
		return NodeInfo{}, fmt.Errorf("rediscost: INFO %s: %w", addr, err)
	}
	if closeErr != nil {
		return NodeInfo{}, fmt.Errorf("rediscost: close connection to %s: %w", addr, closeErr)
	}
	n, err := parseInfo(addr, text)
	if err != nil {
		return NodeInfo{}, err
	}
	final, readAtInfo := m.snapshot()
	// Commands: all before INFO ran are in this INFO; INFO itself is not
	// in Calls. Bytes the server read up to and including the INFO request
	// are counted; of what it wrote, only the replies read before INFO was
	// sent are.
	n.SelfIn = Overhead{Calls: inAtInfo.Calls, NetIn: inAtInfo.NetIn, NetOut: readAtInfo}
	n.SelfOut = Overhead{
		Calls:  subCalls(final.Calls, inAtInfo.Calls),
		NetIn:  final.NetIn - inAtInfo.NetIn,
		NetOut: final.NetOut - readAtInfo,
	}
	return n, nil
}

func subCalls(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range a {
		if d := v - b[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Cost is what Redis spent between two snapshots, summed over nodes.
type Cost struct {
	// Commands is the total of CommandsByName.
	Commands       int64
	CommandsByName map[string]int64
	// UsecByName is commandstats usec= by command: time inside each command.
	UsecByName map[string]int64
	// RedisCPU is used_cpu_sys + used_cpu_user: everything the Redis
	// processes spent, command execution, networking and background work.
	RedisCPU time.Duration
	// CommandUsec is the total of UsecByName, µs.
	CommandUsec int64
	// NetIn and NetOut are bytes Redis read from and wrote to clients.
	NetIn, NetOut int64
	// PeakMemory is the sum over nodes of used_memory_peak in the after
	// snapshot: each node's peak since it started or since CONFIG RESETSTAT.
	// Nodes peak at different moments, so this bounds the cluster's
	// simultaneous peak from above; MemorySampler gives the sampled one.
	PeakMemory int64
	// MemoryDelta is used_memory after minus before, summed over nodes.
	MemoryDelta int64
	// KeysDelta is the number of keys after minus before: job data that was
	// never removed shows up here.
	KeysDelta int64
	// EvictedKeys is how many keys Redis evicted at maxmemory in between.
	EvictedKeys int64
	// CPUByNode is RedisCPU by node address: a cluster's busiest master
	// bounds its throughput, not the sum.
	CPUByNode map[string]time.Duration
	// Restarted lists the nodes whose run_id changed between the two
	// snapshots: their counters restarted from zero, so the window's
	// figures miss what ran before the restart.
	Restarted []string
}

// excludedByName are the commands Diff drops whoever sent them: they are
// how this package reads and resets the counters, and job stores do not
// issue them per job.
func excludedByName(cmd string) bool {
	return cmd == "info" || cmd == "config|resetstat"
}

// Diff returns the cost between two snapshots of the same nodes, summed
// over nodes. It leaves out INFO and CONFIG RESETSTAT calls (by name), and
// the handshake commands and bytes of the two snapshots' own connections
// (exactly, as metered). A node missing from before counts from zero; a node
// missing from after is skipped. A counter that went backwards (stats reset
// in between) counts from zero, as a monitoring system treats a counter
// reset, so the result is a lower bound then rather than negative.
func Diff(before, after Snapshot) Cost {
	c := Cost{CommandsByName: map[string]int64{}, UsecByName: map[string]int64{}, CPUByNode: map[string]time.Duration{}}
	prev := make(map[string]NodeInfo, len(before.Nodes))
	for _, n := range before.Nodes {
		prev[n.Addr] = n
	}
	for _, a := range after.Nodes {
		b, ok := prev[a.Addr]
		if !ok {
			b = NodeInfo{Addr: a.Addr}
		}
		if b.RunID != "" && a.RunID != "" && a.RunID != b.RunID {
			c.Restarted = append(c.Restarted, a.Addr)
		}
		// Our own commands in the window: the after snapshot's handshake
		// and whatever the before snapshot sent after its INFO.
		own := a.SelfIn.add(b.SelfOut)
		for cmd, calls := range a.Calls {
			if excludedByName(cmd) {
				continue
			}
			dc := counterDelta(b.Calls[cmd], calls)
			du := counterDelta(b.UsecByCmd[cmd], a.UsecByCmd[cmd])
			if o := min(own.Calls[cmd], dc); o > 0 {
				// Commandstats has one usec total per command: take our
				// calls out at the window's mean cost per call.
				du -= du * o / dc
				dc -= o
			}
			if dc > 0 {
				c.CommandsByName[cmd] += dc
			}
			if du > 0 {
				c.UsecByName[cmd] += du
			}
		}
		cpu := counterDeltaF(b.UsedCPUSys, a.UsedCPUSys) + counterDeltaF(b.UsedCPUUser, a.UsedCPUUser)
		c.RedisCPU += time.Duration(cpu * float64(time.Second))
		c.CPUByNode[a.Addr] += time.Duration(cpu * float64(time.Second))
		c.NetIn += max(counterDelta(b.NetInputBytes, a.NetInputBytes)-own.NetIn, 0)
		c.NetOut += max(counterDelta(b.NetOutputBytes, a.NetOutputBytes)-own.NetOut, 0)
		c.PeakMemory += a.UsedMemoryPeak
		c.MemoryDelta += a.UsedMemory - b.UsedMemory
		c.KeysDelta += a.Keys - b.Keys
		c.EvictedKeys += counterDelta(b.EvictedKeys, a.EvictedKeys)
	}
	c.total()
	return c
}

// total recomputes Commands and CommandUsec from the per-command maps.
func (c *Cost) total() {
	c.Commands, c.CommandUsec = 0, 0
	for cmd, n := range c.CommandsByName {
		c.Commands += n
		c.CommandUsec += c.UsecByName[cmd]
	}
}

func counterDelta(before, after int64) int64 {
	if after < before {
		return after
	}
	return after - before
}

func counterDeltaF(before, after float64) float64 {
	if after < before {
		return after
	}
	return after - before
}

// Without subtracts traffic the measurement made inside the window that
// Diff cannot see by itself, a MemorySampler's Overhead: its bytes, and its
// handshake commands (with their usec at the window's mean per call). Its
// INFO calls are already gone, dropped by name. Counts never go below zero.
func (c Cost) Without(o Overhead) Cost {
	out := c
	out.CommandsByName = make(map[string]int64, len(c.CommandsByName))
	out.UsecByName = make(map[string]int64, len(c.UsecByName))
	for cmd, n := range c.CommandsByName {
		u := c.UsecByName[cmd]
		if x := min(o.Calls[cmd], n); x > 0 {
			u -= u * x / n
			n -= x
		}
		if n > 0 {
			out.CommandsByName[cmd] = n
			out.UsecByName[cmd] = u
		}
	}
	out.NetIn = max(c.NetIn-o.NetIn, 0)
	out.NetOut = max(c.NetOut-o.NetOut, 0)
	out.total()
	return out
}

// PerJob is a Cost divided by the jobs it bought.
type PerJob struct {
	Commands       float64 // commands per job
	RedisCPUMicros float64 // Redis CPU µs per job (sys+user)
	CommandMicros  float64 // µs inside commands per job
	NetInBytes     float64 // bytes Redis read per job
	NetOutBytes    float64 // bytes Redis wrote per job
}

// PerJob divides c by n jobs; n <= 0 gives zeros rather than infinities, so
// a run that completed nothing prints as 0 instead of poisoning averages.
func (c Cost) PerJob(n int64) PerJob {
	if n <= 0 {
		return PerJob{}
	}
	f := float64(n)
	return PerJob{
		Commands:       float64(c.Commands) / f,
		RedisCPUMicros: float64(c.RedisCPU) / float64(time.Microsecond) / f,
		CommandMicros:  float64(c.CommandUsec) / f,
		NetInBytes:     float64(c.NetIn) / f,
		NetOutBytes:    float64(c.NetOut) / f,
	}
}

// ResetStats runs CONFIG RESETSTAT on every node, zeroing commandstats, the
// net byte counters and used_memory_peak. Call it only on a Redis the
// project spawned: on a shared server it erases other people's statistics.
// Diff does not need it (it subtracts); it makes INFO output of a run
// readable on its own.
func ResetStats(ctx context.Context, addrs []string, auth rclient.Auth) error {
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			c := newClient(addr, auth, nil)
			defer c.Close()
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				errs[i] = fmt.Errorf("rediscost: CONFIG RESETSTAT %s: %w", addr, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
