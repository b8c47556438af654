//go:build unix

package redisserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/redisserver"
)

// noDocker is a Docker probe that always fails, so tests of the "no Docker"
// paths hold on machines that do run Docker. (Pointing DOCKER_HOST at a
// missing socket does not: testcontainers falls back to the default socket.)
func noDocker(context.Context) error {
	return errors.New("Cannot connect to the Docker daemon (test probe)")
}

func start(t *testing.T, o redisserver.Options) *redisserver.Redis {
	t.Helper()
	if o.Logf == nil {
		o.Logf = t.Logf
	}
	r, err := redisserver.Start(t.Context(), o)
	if err != nil {
		t.Fatalf("Start(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, a := range r.Addrs {
		if strings.HasSuffix(a, ":6379") {
			t.Fatalf("server on the shared port 6379: %v", r.Addrs)
		}
	}
	return r
}

func client(t *testing.T, r *redisserver.Redis) *redis.Client {
	t.Helper()
	o := r.ClientOptions()
	c := redis.NewClient(&redis.Options{
		Addr: o.Addrs[0], Password: o.Password, DB: o.DB,
		MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// alive reports whether pid exists and is not a zombie (a container's init
// may be slow to reap, or never reap, orphans).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) && runtime.GOOS != "linux"
	}
	// Fields after the command name, which is in parentheses: state first.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestSpawnPingClose(t *testing.T) {
	t.Parallel()
	r := start(t, redisserver.Options{Mode: redisserver.ModeSpawn})
	if r.Mode != redisserver.ModeSpawn || r.Cluster || len(r.Addrs) != 1 || len(r.Nodes) != 1 {
		t.Fatalf("got Mode=%q Cluster=%v Addrs=%v Nodes=%d", r.Mode, r.Cluster, r.Addrs, len(r.Nodes))
	}
	n := r.Nodes[0]
	if n.Addr() != r.Addrs[0] || !strings.HasPrefix(n.Addr(), "127.0.0.1:") {
		t.Fatalf("node addr %q, Addrs %v", n.Addr(), r.Addrs)
	}
	co := r.ClientOptions()
	if co.Cluster || len(co.Addrs) != 1 || co.Addrs[0] != r.Addrs[0] {
		t.Fatalf("ClientOptions %+v", co)
	}
	ctx := timeout(t, 5*time.Second)
	c := client(t, r)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	v, err := r.Version(ctx)
	if err != nil || !strings.Contains(v, ".") {
		t.Fatalf("Version = %q, %v", v, err)
	}
	t.Logf("redis %s at %s, dir %s", v, n.Addr(), n.Dir())
	// Persistence is off unless asked.
	for k, want := range map[string]string{"save": "", "appendonly": "no"} {
		got, err := c.ConfigGet(ctx, k).Result()
		if err != nil || got[k] != want {
			t.Errorf("CONFIG GET %s = %v, %v; want %q", k, got, err, want)
		}
	}

	pid, dir := n.PID(), n.Dir()
	if pid <= 0 || !alive(pid) {
		t.Fatalf("PID %d not alive", pid)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("dir: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if alive(pid) {
		t.Errorf("pid %d still alive after Close", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir %s still there after Close: %v", dir, err)
	}
	if n.PID() != 0 || n.Running() {
		t.Errorf("node reports PID %d running=%v after Close", n.PID(), n.Running())
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	began := time.Now()
	r := start(t, redisserver.Options{Mode: redisserver.ModeCluster})
	took := time.Since(began)
	// How fast a cluster forms is logged, not asserted: on a loaded runner it
	// varies, and a speed target belongs in a scenario, not a test.
	t.Logf("cluster of 3 ready in %v", took)
	if r.Mode != redisserver.ModeCluster || !r.Cluster || len(r.Addrs) != 3 || len(r.Nodes) != 3 {
		t.Fatalf("got Mode=%q Cluster=%v Addrs=%v Nodes=%d", r.Mode, r.Cluster, r.Addrs, len(r.Nodes))
	}
	co := r.ClientOptions()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: co.Addrs, Password: co.Password, DisableIdentity: true})
	t.Cleanup(func() { _ = cc.Close() })

	keys := make([]string, 30)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
	}
	setGetAll := func(t *testing.T, round string) {
		t.Helper()
		ctx := timeout(t, 5*time.Second)
		for _, k := range keys {
			if err := cc.Set(ctx, k, round+k, 0).Err(); err != nil {
				t.Fatalf("SET %s: %v", k, err)
			}
		}
		for _, k := range keys {
			if v, err := cc.Get(ctx, k).Result(); err != nil || v != round+k {
				t.Fatalf("GET %s = %q, %v", k, v, err)
			}
		}
	}
	setGetAll(t, "a")

	ctx := timeout(t, 5*time.Second)
	slots := map[int64]bool{}
	for _, k := range keys {
		s, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[s] = true
	}
	if len(slots) < 3 {
		t.Errorf("keys fell in only %d slots", len(slots))
	}
	for i, n := range r.Nodes {
		size, err := client(t, &redisserver.Redis{Addrs: []string{n.Addr()}}).DBSize(ctx).Result()
		if err != nil || size == 0 {
			t.Errorf("master %d (%s) holds %d keys, %v; want keys on every master", i, n.Addr(), size, err)
		}
	}

	t.Run("URL detects cluster", func(t *testing.T) {
		u := start(t, redisserver.Options{Mode: redisserver.ModeURL, URL: "redis://" + r.Addrs[1]})
		if !u.Cluster || u.Mode != redisserver.ModeURL || len(u.Addrs) != 3 || u.Addrs[0] != r.Addrs[1] {
			t.Fatalf("got Cluster=%v Mode=%q Addrs=%v", u.Cluster, u.Mode, u.Addrs)
		}
		if _, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeURL, URL: "redis://" + r.Addrs[0] + "/3"}); err == nil {
			t.Error("URL with db 3 on a cluster accepted")
		}
	})

	t.Run("restarted node rejoins", func(t *testing.T) {
		n := r.Nodes[1]
		pid, addr := n.PID(), n.Addr()
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
		if alive(pid) || n.Running() {
			t.Fatalf("pid %d alive after Kill", pid)
		}
		began := time.Now()
		if err := n.Restart(timeout(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		t.Logf("node rejoined in %v", time.Since(began))
		if n.Addr() != addr || n.PID() == pid || n.PID() == 0 {
			t.Fatalf("after Restart addr %s (was %s) pid %d (was %d)", n.Addr(), addr, n.PID(), pid)
		}
		setGetAll(t, "b")
	})
}

// TestClusterReplicas spawns 3 masters with a replica each, checks the
// replicas replicate, kills a master and waits for the cluster to promote
// its replica (cluster-node-timeout 2s; a master's failure needs a
// majority of masters to see it, so 3 at least): the failover a scenario
// with redis.replicas exercises.
func TestClusterReplicas(t *testing.T) {
	t.Parallel()
	r := start(t, redisserver.Options{Mode: redisserver.ModeCluster, Masters: 3, Replicas: 1})
	if len(r.Nodes) != 3 || len(r.Replicas) != 3 || len(r.Addrs) != 3 {
		t.Fatalf("got %d masters, %d replicas, Addrs %v", len(r.Nodes), len(r.Replicas), r.Addrs)
	}
	ctx := timeout(t, 30*time.Second)
	for _, n := range r.Replicas {
		info, err := client(t, &redisserver.Redis{Addrs: []string{n.Addr()}}).Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up") {
			t.Fatalf("replica %s: %v\n%s", n.Addr(), err, info)
		}
	}
	co := r.ClientOptions()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: co.Addrs, Password: co.Password, DisableIdentity: true})
	t.Cleanup(func() { _ = cc.Close() })
	if err := cc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dead := r.Nodes[0].Addr()
	if err := r.Nodes[0].Kill(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	survivor := client(t, &redisserver.Redis{Addrs: []string{r.Nodes[1].Addr()}})
	for {
		slots, err := survivor.ClusterSlots(ctx).Result()
		promoted := err == nil && len(slots) > 0
		for _, sl := range slots {
			promoted = promoted && len(sl.Nodes) > 0 && sl.Nodes[0].Addr != dead
		}
		if promoted {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no failover within 30s of killing %s: %v", dead, slots)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("replica promoted %v after the master's death", time.Since(began).Round(time.Millisecond))
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	r := start(t, redisserver.Options{Mode: redisserver.ModeSpawn})
	c := client(t, r)
	if err := c.Ping(timeout(t, 10*time.Second)).Err(); err != nil {
		t.Fatalf("PING before Pause: %v", err)
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	if !r.Nodes[0].Paused() {
		t.Error("node does not report Paused")
	}
	began := time.Now()
	err := c.Ping(timeout(t, 200*time.Millisecond)).Err()
	if err == nil {
		t.Fatal("PING answered while paused")
	}
	// Generous bound: it tells a hang (a paused server never answers) from
	// a deadline honoured late on a busy machine.
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("paused PING took %v to fail; its deadline was 200ms", d)
	}
	t.Logf("paused PING: %v", err)
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(timeout(t, 10*time.Second)).Err(); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		appendOnly  bool
		appendFsync string
		stop        bool // graceful Stop instead of Kill
		wantKept    bool
	}{
		{name: "AOF always survives Kill", appendOnly: true, appendFsync: "always", wantKept: true},
		{name: "AOF everysec survives Stop", appendOnly: true, appendFsync: "everysec", stop: true, wantKept: true},
		{name: "no persistence loses data on Kill", wantKept: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := start(t, redisserver.Options{Mode: redisserver.ModeSpawn, AppendOnly: tt.appendOnly, AppendFsync: tt.appendFsync})
			n := r.Nodes[0]
			ctx := timeout(t, 10*time.Second)
			c := client(t, r)
			if tt.appendOnly {
				got, err := c.ConfigGet(ctx, "appendfsync").Result()
				if err != nil || got["appendfsync"] != tt.appendFsync {
					t.Fatalf("appendfsync = %v, %v", got, err)
				}
			}
			if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			pid, addr, dir := n.PID(), n.Addr(), n.Dir()
			stop := n.Kill
			if tt.stop {
				stop = n.Stop
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if alive(pid) || n.PID() != 0 {
				t.Fatalf("pid %d alive after stop", pid)
			}
			if err := n.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			if n.Addr() != addr || n.Dir() != dir || n.PID() == pid {
				t.Fatalf("after Restart %s %s pid %d; before %s %s pid %d", n.Addr(), n.Dir(), n.PID(), addr, dir, pid)
			}
			v, err := c.Get(ctx, "k").Result()
			switch {
			case tt.wantKept && (err != nil || v != "v"):
				t.Errorf("GET k = %q, %v; want kept", v, err)
			case !tt.wantKept && !errors.Is(err, redis.Nil):
				t.Errorf("GET k = %q, %v; want lost", v, err)
			}
		})
	}
}

func TestURLMode(t *testing.T) {
	t.Parallel()
	s := start(t, redisserver.Options{Mode: redisserver.ModeSpawn, ExtraArgs: []string{"--requirepass", "s3cret"}})
	if s.Password != "s3cret" {
		t.Fatalf("spawned Password %q; want it taken from --requirepass", s.Password)
	}
	addr := s.Addrs[0]
	ctx := timeout(t, 10*time.Second)

	for _, mode := range []redisserver.Mode{redisserver.ModeURL, redisserver.ModeAuto, ""} {
		t.Run("mode "+string(mode), func(t *testing.T) {
			r := start(t, redisserver.Options{Mode: mode, URL: "redis://:s3cret@" + addr + "/2"})
			if r.Mode != redisserver.ModeURL || r.Cluster || r.DB != 2 || r.Password != "s3cret" || len(r.Addrs) != 1 || r.Addrs[0] != addr || len(r.Nodes) != 0 {
				t.Fatalf("got %+v", r)
			}
			if err := client(t, r).Set(ctx, "in-db-2", "x", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := client(t, s).Exists(ctx, "in-db-2").Result(); err != nil || n != 0 {
				t.Errorf("key written to db 2 visible in db 0: %d, %v", n, err)
			}
			if v, err := r.Version(ctx); err != nil || v == "" {
				t.Errorf("Version = %q, %v", v, err)
			}
			if err := r.Pause(); !errors.Is(err, redisserver.ErrNotOwned) {
				t.Errorf("Pause = %v; want ErrNotOwned", err)
			}
			if err := r.Resume(); !errors.Is(err, redisserver.ErrNotOwned) {
				t.Errorf("Resume = %v; want ErrNotOwned", err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := client(t, s).Ping(ctx).Err(); err != nil {
				t.Errorf("Close of a URL Redis touched the server: %v", err)
			}
		})
	}

	closedPort := func() string {
		r := start(t, redisserver.Options{Mode: redisserver.ModeSpawn})
		a := r.Addrs[0]
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		return a
	}()
	for _, tt := range []struct{ name, url, want string }{
		{"wrong password", "redis://:nope@" + addr, "PING"},
		{"no password", "redis://" + addr, "PING"},
		{"nothing listening", "redis://" + closedPort, "does not answer PING"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			began := time.Now()
			_, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeURL, URL: tt.url, StartTimeout: 2 * time.Second})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start(%s) = %v; want error containing %q", tt.url, err, tt.want)
			}
			if strings.Contains(err.Error(), "nope") {
				t.Errorf("error shows the password: %v", err)
			}
			if d := time.Since(began); d > 15*time.Second {
				t.Errorf("took %v with a 2s StartTimeout", d)
			}
		})
	}
}

// TestStartErrors covers option validation and missing prerequisites; none
// of these may start anything or take long.
func TestStartErrors(t *testing.T) {
	const bogus = "/nonexistent/bin/redis-server-bogus"
	tests := []struct {
		name    string
		o       redisserver.Options
		noRedis bool     // errors.Is(err, ErrNoRedis)
		want    []string // substrings of the error
		notWant string
	}{
		{name: "bad AppendFsync", o: redisserver.Options{Mode: redisserver.ModeSpawn, AppendOnly: true, AppendFsync: "sometimes"},
			want: []string{"AppendFsync", `"sometimes"`, `"always"`, `"everysec"`, `"no"`}},
		{name: "bad AppendFsync without AOF", o: redisserver.Options{AppendFsync: "Always"}, want: []string{"AppendFsync"}},
		{name: "unknown mode", o: redisserver.Options{Mode: "sentinel"}, want: []string{"Mode", "sentinel", "embedded"}},
		{name: "negative masters", o: redisserver.Options{Mode: redisserver.ModeCluster, Masters: -1}, want: []string{"Masters"}},
		{name: "url mode without URL", o: redisserver.Options{Mode: redisserver.ModeURL}, want: []string{"URL", "redis://"}},
		{name: "URL with spawn mode", o: redisserver.Options{Mode: redisserver.ModeSpawn, URL: "redis://127.0.0.1:1"}, want: []string{"URL"}},
		{name: "URL scheme", o: redisserver.Options{URL: "http://127.0.0.1:7000"}, want: []string{"http://127.0.0.1:7000", "scheme", "redis://[[user]:password@]host:port[/db]", "rediss://"}},
		{name: "URL TLS option", o: redisserver.Options{URL: "rediss://127.0.0.1:7000?nope=1"}, want: []string{"unknown TLS option", "nope", "ca_file"}},
		{name: "URL TLS ca_file", o: redisserver.Options{URL: "rediss://127.0.0.1:7000?ca_file=/nonexistent/ca.crt"}, want: []string{"ca_file", "/nonexistent/ca.crt"}},
		{name: "URL TLS half a client cert", o: redisserver.Options{URL: "rediss://127.0.0.1:7000?cert_file=/x.crt"}, want: []string{"cert_file and key_file"}},
		{name: "URL TLS skip_verify", o: redisserver.Options{URL: "rediss://127.0.0.1:7000?skip_verify=maybe"}, want: []string{"skip_verify", "true, false"}},
		{name: "URL no port", o: redisserver.Options{Mode: redisserver.ModeURL, URL: "redis://localhost"}, want: []string{"redis://localhost", "port"}},
		{name: "URL bad port", o: redisserver.Options{URL: "redis://localhost:99999"}, want: []string{"99999"}},
		{name: "URL no host", o: redisserver.Options{URL: "redis://:7000"}, want: []string{"host"}},
		{name: "URL bad db", o: redisserver.Options{URL: "redis://127.0.0.1:7000/zero"}, want: []string{"database", "zero"}},
		{name: "URL query", o: redisserver.Options{URL: "redis://127.0.0.1:7000?db=1"}, want: []string{"query"}},
		{name: "URL user", o: redisserver.Options{URL: "redis://alice:pw@127.0.0.1:7000"}, want: []string{"alice"}, notWant: ":pw@"},
		{name: "URL unparsable hides password", o: redisserver.Options{URL: "redis://:hunter2@127.0.0.1:7x00"}, want: []string{"bad Redis URL"}, notWant: "hunter2"},
		{name: "spawn bogus ServerPath", o: redisserver.Options{Mode: redisserver.ModeSpawn, ServerPath: bogus},
			noRedis: true, want: []string{"redis-server", bogus, "apt-get install redis-server"}},
		{name: "cluster bogus ServerPath", o: redisserver.Options{Mode: redisserver.ModeCluster, ServerPath: bogus},
			noRedis: true, want: []string{"redis-server", bogus}},
		{name: "container without Docker", o: redisserver.WithDockerProbe(redisserver.Options{Mode: redisserver.ModeContainer}, noDocker),
			noRedis: true, want: []string{"Docker", "test probe"}},
		{name: "auto with nothing", o: redisserver.WithDockerProbe(redisserver.Options{ServerPath: bogus}, noDocker),
			noRedis: true, want: []string{"apt-get install redis-server", "start Docker", "--redis-url", "redis.url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			began := time.Now()
			r, err := redisserver.Start(timeout(t, 10*time.Second), tt.o)
			took := time.Since(began)
			if err == nil {
				_ = r.Close()
				t.Fatal("Start succeeded")
			}
			t.Logf("%v (in %v)", err, took)
			if got := errors.Is(err, redisserver.ErrNoRedis); got != tt.noRedis {
				t.Errorf("errors.Is(err, ErrNoRedis) = %v; want %v", got, tt.noRedis)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error contains %q", tt.notWant)
			}
		})
	}
}

// TestStartFailureShowsLog: a server that cannot start reports its log.
func TestStartFailureShowsLog(t *testing.T) {
	t.Parallel()
	_, err := redisserver.Start(timeout(t, 10*time.Second), redisserver.Options{
		Mode: redisserver.ModeSpawn, ExtraArgs: []string{"--no-such-option", "1"}, Logf: t.Logf,
	})
	if err == nil {
		t.Fatal("Start with a bad option succeeded")
	}
	t.Log(err)
	for _, w := range []string{"exited during startup", "tail of", "no-such-option"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q", w)
		}
	}
}

// TestPortTakenRetries: a port grabbed between choosing it and redis-server
// binding it makes Start move to another port instead of failing, even when
// the holder is another Redis that answers PING.
func TestPortTakenRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		take func(t *testing.T) int
	}{
		{"plain listener", func(t *testing.T) int {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.Close() })
			return l.Addr().(*net.TCPAddr).Port
		}},
		{"another redis", func(t *testing.T) int {
			return start(t, redisserver.Options{Mode: redisserver.ModeSpawn}).Nodes[0].Port()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			taken := tt.take(t)
			r, err := redisserver.SpawnOnPort(timeout(t, 10*time.Second), redisserver.Options{Logf: t.Logf}, taken)
			if err != nil {
				t.Fatalf("Start with port %d taken: %v", taken, err)
			}
			t.Cleanup(func() { _ = r.Close() })
			if r.Nodes[0].Port() == taken {
				t.Fatalf("server claims the taken port %d", taken)
			}
			c := client(t, r)
			info, err := c.Info(timeout(t, 10*time.Second), "server").Result()
			if err != nil {
				t.Fatal(err)
			}
			if want := "process_id:" + strconv.Itoa(r.Nodes[0].PID()); !strings.Contains(info, want) {
				t.Errorf("Addrs[0] is not our server: INFO lacks %q", want)
			}
			if u := r.URL(); u != "redis://"+r.Addrs[0] {
				t.Errorf("URL() = %q", u)
			}
		})
	}
}

// TestNoLeakWhenParentKilled: a SIGKILLed parent takes its servers with it.
func TestNoLeakWhenParentKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSpawnAndWait$")
	cmd.Env = append(os.Environ(), "REDISSERVER_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "HELPER pid=%d dir=%s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("helper printed no server pid (%v)", sc.Err())
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // the killed parent could not
	if !alive(pid) {
		t.Fatalf("server %d not alive while its parent runs", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %d outlived its SIGKILLed parent", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHelperSpawnAndWait is the child process of TestNoLeakWhenParentKilled.
func TestHelperSpawnAndWait(t *testing.T) {
	if os.Getenv("REDISSERVER_HELPER") != "1" {
		t.Skip("helper process only")
	}
	r, err := redisserver.Start(t.Context(), redisserver.Options{Mode: redisserver.ModeSpawn})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("HELPER pid=%d dir=%s\n", r.Nodes[0].PID(), r.Nodes[0].Dir())
	time.Sleep(time.Minute)
	_ = r.Close()
}

// TestDoctorEviction: the doctor warns about a server that evicts
// (allkeys-lru), naming the policy and the scenario that reproduces the
// incident, and not about noeviction.
func TestDoctorEviction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		ok     bool
	}{{"allkeys-lru", false}, {"noeviction", true}} {
		r := start(t, redisserver.Options{Mode: redisserver.ModeSpawn, ExtraArgs: []string{"--maxmemory", "64mb", "--maxmemory-policy", tc.policy}})
		rep := redisserver.Doctor(timeout(t, 10*time.Second), r)
		var found bool
		for _, c := range rep.Checks {
			if c.Name == "maxmemory-policy" {
				found = true
				if c.OK != tc.ok || !c.Warn || !strings.Contains(c.Detail, tc.policy) {
					t.Errorf("%s: check %+v", tc.policy, c)
				}
				if !tc.ok && !strings.Contains(c.Detail, "scenarios/eviction.yaml") {
					t.Errorf("%s: the warning does not name the scenario that shows it: %q", tc.policy, c.Detail)
				}
			}
		}
		if !found || !rep.Runnable() {
			t.Errorf("%s: no maxmemory-policy check, or not runnable: %+v", tc.policy, rep)
		}
	}
}
