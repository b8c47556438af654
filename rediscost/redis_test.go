package rediscost_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// start spawns a private Redis for the test (redistest.Start).
func start(t *testing.T, mode redisserver.Mode, extra ...string) *redisserver.Redis {
	t.Helper()
	return redistest.Start(t, redisserver.Options{Mode: mode, ExtraArgs: extra})
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func take(t *testing.T, r *redisserver.Redis) rediscost.Snapshot {
	t.Helper()
	s, err := rediscost.Take(ctxFor(t), r.Addrs, r.Auth())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != len(r.Addrs) {
		t.Fatalf("%d nodes in snapshot, want %d", len(s.Nodes), len(r.Addrs))
	}
	return s
}

// rawCommands sends cmds to addr over a plain socket, with no handshake,
// and reads one reply line each, so the test knows to the byte what the
// server read and wrote. It returns the bytes written and read.
func rawCommands(t *testing.T, addr, password string, cmds [][]string) (in, out int64) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if password != "" {
		cmds = append([][]string{{"AUTH", password}}, cmds...)
	}
	br := bufio.NewReader(c)
	for _, cmd := range cmds {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		n, err := io.WriteString(c, b.String())
		if err != nil {
			t.Fatal(err)
		}
		in += int64(n)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line[0] != '+' && line[0] != ':' {
			t.Fatalf("%v: reply %q", cmd, line)
		}
		out += int64(len(line))
	}
	return in, out
}

func sets(n int, prefix string) [][]string {
	var cmds [][]string
	for i := range n {
		cmds = append(cmds, []string{"SET", fmt.Sprintf("%s:%d", prefix, i), "v"})
	}
	return cmds
}

func TestTakeDiffStandalone(t *testing.T) {
	r := start(t, redisserver.ModeSpawn)
	addr := r.Addrs[0]
	if err := rediscost.ResetStats(ctxFor(t), r.Addrs, r.Auth()); err != nil {
		t.Fatal(err)
	}

	t.Run("after reset only our own calls are counted", func(t *testing.T) {
		s := take(t, r)
		n := s.Nodes[0]
		for cmd, calls := range n.Calls {
			if want := n.SelfIn.Calls[cmd]; cmd != "config|resetstat" && calls != want {
				t.Errorf("%s: %d calls after RESETSTAT, want %d (our handshake)", cmd, calls, want)
			}
		}
		if n.UsedMemory <= 0 || n.UsedMemoryPeak < n.UsedMemory || n.UsedCPUSys+n.UsedCPUUser <= 0 {
			t.Errorf("implausible node info %+v", n)
		}
	})

	t.Run("nothing between two snapshots costs nothing", func(t *testing.T) {
		before := take(t, r)
		after := take(t, r)
		c := rediscost.Diff(before, after)
		if c.Commands != 0 || c.NetIn != 0 || c.NetOut != 0 || c.CommandUsec != 0 || len(c.CommandsByName) != 0 {
			t.Errorf("measurement sees itself: %+v (before self %+v/%+v, after self %+v/%+v)",
				c, before.Nodes[0].SelfIn, before.Nodes[0].SelfOut, after.Nodes[0].SelfIn, after.Nodes[0].SelfOut)
		}
		// An intermediate snapshot lies wholly inside the window.
		mid := take(t, r)
		last := take(t, r)
		if c := rediscost.Diff(after, last).Without(mid.Overhead()); c.Commands != 0 || c.NetIn != 0 || c.NetOut != 0 {
			t.Errorf("intermediate snapshot not subtracted: %+v", c)
		}
	})

	t.Run("100 SETs", func(t *testing.T) {
		before := take(t, r)
		in, out := rawCommands(t, addr, r.Password, sets(100, "k"))
		after := take(t, r)
		c := rediscost.Diff(before, after)
		if c.CommandsByName["set"] != 100 || c.Commands != 100 {
			t.Errorf("commands %v (total %d), want exactly 100 set", c.CommandsByName, c.Commands)
		}
		if c.NetIn != in || c.NetOut != out {
			t.Errorf("bytes in %d out %d, want exactly what the client sent %d and read %d", c.NetIn, c.NetOut, in, out)
		}
		if c.KeysDelta != 100 || c.MemoryDelta <= 0 || c.PeakMemory <= 0 {
			t.Errorf("keys %+d, memory %+d, peak %d: want 100 new keys and growth", c.KeysDelta, c.MemoryDelta, c.PeakMemory)
		}
		if c.CommandUsec <= 0 || c.RedisCPU < 0 {
			t.Errorf("command usec %d, cpu %v", c.CommandUsec, c.RedisCPU)
		}
		pj := c.PerJob(100)
		if pj.Commands != 1 || pj.NetInBytes != float64(in)/100 {
			t.Errorf("per job %+v", pj)
		}
	})

	t.Run("a store client's handshake is counted, not excluded", func(t *testing.T) {
		before := take(t, r)
		c := redis.NewClient(&redis.Options{Addr: addr, Password: r.Password, Protocol: 3, DisableIdentity: true, MaxRetries: -1})
		if err := c.Set(ctxFor(t), "store", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		cost := rediscost.Diff(before, take(t, r))
		if cost.CommandsByName["hello"] != 1 || cost.CommandsByName["set"] != 1 {
			t.Errorf("commands %v, want the store's hello and set", cost.CommandsByName)
		}
	})

	t.Run("memory sampler", func(t *testing.T) {
		before := take(t, r)
		s := rediscost.StartMemorySampler(ctxFor(t), r.Addrs, r.Auth(), 5*time.Millisecond)
		rawCommands(t, addr, r.Password, [][]string{{"SET", "big", strings.Repeat("x", 1<<20)}})
		time.Sleep(60 * time.Millisecond)
		peak := s.Stop()
		if s.Stop() != peak {
			t.Error("second Stop returned a different peak")
		}
		after := take(t, r)
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if s.Samples() < 3 {
			t.Errorf("only %d samples", s.Samples())
		}
		// used_memory moves by a few hundred bytes with client buffers, so
		// compare with slack.
		if now := after.Nodes[0].UsedMemory; peak < 1<<20 || peak < now-64<<10 {
			t.Errorf("peak %d, used now %d: want at least the 1 MiB value", peak, now)
		}
		c := rediscost.Diff(before, after).Without(s.Overhead())
		if c.Commands != 1 || c.CommandsByName["set"] != 1 {
			t.Errorf("commands %v, want only the one set (sampler's INFO and handshake removed)", c.CommandsByName)
		}
		if c.NetIn < 1<<20 || c.NetIn > 1<<20+100 || c.NetOut != 5 {
			t.Errorf("bytes in %d out %d, want the 1 MiB SET and its +OK", c.NetIn, c.NetOut)
		}
	})
}

func TestTakePassword(t *testing.T) {
	r := start(t, redisserver.ModeSpawn, "--requirepass", "s3cret")
	if r.Password != "s3cret" {
		t.Fatalf("password %q", r.Password)
	}
	before := take(t, r)
	in, out := rawCommands(t, r.Addrs[0], r.Password, sets(10, "p"))
	c := rediscost.Diff(before, take(t, r))
	// The raw client's AUTH is store traffic; the snapshots' own AUTH or
	// HELLO is not.
	if c.CommandsByName["set"] != 10 || c.CommandsByName["auth"] != 1 || c.Commands != 11 || c.NetIn != in || c.NetOut != out {
		t.Errorf("got %v in %d out %d, want 10 set + 1 auth, in %d out %d", c.CommandsByName, c.NetIn, c.NetOut, in, out)
	}
	if _, err := rediscost.Take(ctxFor(t), r.Addrs, rclient.Auth{Password: "wrong"}); err == nil {
		t.Error("Take with a wrong password: want an error")
	}
}

func TestTakeCluster(t *testing.T) {
	r := start(t, redisserver.ModeCluster)
	if len(r.Addrs) != 3 {
		t.Fatalf("cluster has %d masters, want 3", len(r.Addrs))
	}
	before := take(t, r)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.Addrs, Password: r.Password, DisableIdentity: true})
	defer cc.Close()
	for i := range 30 {
		if err := cc.Set(ctxFor(t), fmt.Sprintf("job:%d", i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Keyless commands on every node: each node's share is known exactly.
	for _, a := range r.Addrs {
		rawCommands(t, a, r.Password, [][]string{{"PING"}, {"PING"}})
	}
	after := take(t, r)
	c := rediscost.Diff(before, after)
	if c.CommandsByName["set"] != 30 || c.KeysDelta != 30 {
		t.Errorf("set calls %d, keys %+d: want 30 each, summed over 3 nodes", c.CommandsByName["set"], c.KeysDelta)
	}
	if c.CommandsByName["ping"] != 6 {
		t.Errorf("ping calls %d, want 2 per node x 3", c.CommandsByName["ping"])
	}
	nodesWithSets := 0
	for i, n := range after.Nodes {
		if n.Calls["set"] > before.Nodes[i].Calls["set"] {
			nodesWithSets++
		}
	}
	if nodesWithSets < 2 {
		t.Errorf("sets landed on %d nodes; want keys spread over the cluster", nodesWithSets)
	}
	if c.NetIn <= 0 || c.NetOut <= 0 || c.RedisCPU < 0 {
		t.Errorf("cost %+v", c)
	}
}

func TestTakeErrors(t *testing.T) {
	cases := []struct {
		name  string
		addrs []string
	}{
		{"no addresses", nil},
		{"nothing listening", []string{"127.0.0.1:1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := rediscost.Take(ctxFor(t), tc.addrs, rclient.Auth{}); err == nil {
				t.Error("want an error")
			}
		})
	}
	if err := rediscost.ResetStats(ctxFor(t), []string{"127.0.0.1:1"}, rclient.Auth{}); err == nil {
		t.Error("ResetStats on nothing: want an error")
	}
	s := rediscost.StartMemorySampler(ctxFor(t), []string{"127.0.0.1:1"}, rclient.Auth{}, time.Millisecond)
	for deadline := time.Now().Add(5 * time.Second); s.Err() == nil && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if peak := s.Stop(); peak != 0 || s.Err() == nil {
		t.Errorf("sampler on nothing: peak %d err %v, want 0 and an error", peak, s.Err())
	}
}
