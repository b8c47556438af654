package rclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// topology is one Redis shared by every test of the package; keys are
// prefixed per adapter, topology and case so that tests never collide.
type topology struct {
	name string
	srv  *redisserver.Redis
	err  error // why srv is nil
}

var topologies = []*topology{{name: "standalone"}, {name: "cluster"}}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	modes := map[string]redisserver.Mode{"standalone": redisserver.ModeSpawn, "cluster": redisserver.ModeCluster}
	var wg sync.WaitGroup
	for _, tp := range topologies {
		wg.Go(func() {
			tp.srv, tp.err = redisserver.Start(ctx, redisserver.Options{Mode: modes[tp.name]})
		})
	}
	wg.Wait()
	defer func() {
		for _, tp := range topologies {
			if tp.srv != nil {
				if err := tp.srv.Close(); err != nil {
					fmt.Fprintf(os.Stderr, "rclient_test: close %s: %v\n", tp.name, err)
				}
			}
		}
	}()
	return m.Run()
}

// fixture is what one case gets: a client of one adapter on one topology.
type fixture struct {
	c      rclient.Client
	tp     *topology
	prefix string
}

func (f *fixture) cluster() bool { return f.tp.srv.Cluster }

// key returns a key unique to this adapter, topology and case.
func (f *fixture) key(s string) string { return f.prefix + s }

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) mustDo(t *testing.T, c rclient.Command) any {
	t.Helper()
	v, err := f.c.Do(ctxFor(t, 10*time.Second), c)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	return v
}

func cmd(head []string, keys []string, args ...string) rclient.Command {
	return rclient.Command{Head: head, Keys: keys, Args: args}
}

var cases = []struct {
	name string
	run  func(t *testing.T, f *fixture)
}{
	{"Do", testDo},
	{"RedisError", testRedisError},
	{"DoMulti", testDoMulti},
	{"ScriptFallbackLoadFlush", testScriptLifecycle},
	{"ScriptErrorReply", testScriptErrorReply},
	{"DoBlocking", testDoBlocking},
	{"Paused", testPaused},
	{"CrossSlot", testCrossSlot},
	{"SlotMatchesServer", testSlotMatchesServer},
}

// TestAdapters runs the one shared body for every adapter on every topology.
func TestAdapters(t *testing.T) {
	run := time.Now().UnixNano() // fresh keys when run again (-count) on the same servers
	for _, tp := range topologies {
		for _, lib := range rclient.Names() {
			t.Run(lib+"/"+tp.name, func(t *testing.T) {
				c := newClient(t, lib, tp)
				if got := c.Name(); got != lib {
					t.Errorf("Name() = %q, want %q", got, lib)
				}
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						tc.run(t, &fixture{c: c, tp: tp, prefix: fmt.Sprintf("rct:%x:%s:%s:%s:", run, lib, tp.name, tc.name)})
					})
				}
			})
		}
	}
}

func newClient(t *testing.T, lib string, tp *topology) rclient.Client {
	t.Helper()
	if tp.srv == nil {
		if errors.Is(tp.err, redisserver.ErrNoRedis) {
			t.Skipf("no %s Redis: %v", tp.name, tp.err)
		}
		t.Fatalf("start %s Redis: %v", tp.name, tp.err)
	}
	c, err := rclient.New(lib, tp.srv.ClientOptions())
	if err != nil {
		t.Fatalf("New(%q): %v", lib, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func testDo(t *testing.T, f *fixture) {
	k, n, h, z := f.key("str"), f.key("n"), f.key("hash"), f.key("zset")
	steps := []struct {
		name string
		cmd  rclient.Command
		want any
	}{
		{"SET", rclient.Cmd("SET", k, "v1"), "OK"},
		{"GET", rclient.Cmd("GET", k), "v1"},
		{"GET missing", rclient.Cmd("GET", f.key("missing")), nil},
		{"INCR new", rclient.Cmd("INCR", n), int64(1)},
		{"INCR", rclient.Cmd("INCR", n), int64(2)},
		{"HSET", rclient.Cmd("HSET", h, "f1", "a", "f2", "b"), int64(2)},
		{"HGETALL map", rclient.Cmd("HGETALL", h), map[string]any{"f1": "a", "f2": "b"}},
		{"HGETALL missing", rclient.Cmd("HGETALL", f.key("nohash")), map[string]any{}},
		{"ZADD", rclient.Cmd("ZADD", z, "1", "a", "2.5", "b"), int64(2)},
		{"ZRANGE WITHSCORES", rclient.Cmd("ZRANGE", z, "0", "-1", "WITHSCORES"),
			[]any{[]any{"a", 1.0}, []any{"b", 2.5}}},
		{"ZSCORE double", rclient.Cmd("ZSCORE", z, "b"), 2.5},
		{"ZRANGE empty", rclient.Cmd("ZRANGE", f.key("nozset"), "0", "-1"), []any{}},
		{"Lua RESP3 true", cmd([]string{"EVAL", "redis.setresp(3) return true", "1"}, []string{k}), true},
		{"Lua RESP3 false", cmd([]string{"EVAL", "redis.setresp(3) return false", "1"}, []string{k}), false},
		{"SET tagged", rclient.Cmd("SET", f.key("{m}1"), "x"), "OK"},
		{"MGET nil inside", cmd([]string{"MGET"}, []string{f.key("{m}1"), f.key("{m}2")}), []any{"x", nil}},
	}
	for _, s := range steps {
		got, err := f.c.Do(ctxFor(t, 10*time.Second), s.cmd)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s: got %#v, want %#v", s.name, got, s.want)
		}
	}
}

func testRedisError(t *testing.T, f *fixture) {
	k, h := f.key("str"), f.key("hash")
	f.mustDo(t, rclient.Cmd("SET", k, "notanumber"))
	f.mustDo(t, rclient.Cmd("HSET", h, "f", "v"))
	steps := []struct {
		name    string
		cmd     rclient.Command
		wantMsg string // prefix of RedisError.Msg, as Redis sent it
	}{
		{"INCR string", rclient.Cmd("INCR", k), "ERR value is not an integer"},
		{"GET hash", rclient.Cmd("GET", h), "WRONGTYPE "},
		{"unknown command", rclient.Command{Head: []string{"NOSUCHCOMMAND"}}, "ERR unknown command"},
		{"Lua runtime error", cmd([]string{"EVAL", "error('boom')", "1"}, []string{k}), "ERR user_script:1: boom"},
	}
	for _, s := range steps {
		v, err := f.c.Do(ctxFor(t, 10*time.Second), s.cmd)
		var re *rclient.RedisError
		if !errors.As(err, &re) {
			t.Fatalf("%s: got (%v, %v), want a *RedisError", s.name, v, err)
		}
		if v != nil {
			t.Errorf("%s: value %#v with an error", s.name, v)
		}
		if !strings.HasPrefix(re.Msg, s.wantMsg) {
			t.Errorf("%s: Msg %q, want prefix %q", s.name, re.Msg, s.wantMsg)
		}
	}
}

func testDoMulti(t *testing.T, f *fixture) {
	if got := f.c.DoMulti(ctxFor(t, 10*time.Second)); len(got) != 0 {
		t.Errorf("DoMulti() = %v, want no results", got)
	}
	// Keys without a common hash tag, so on a cluster they spread over nodes
	// and the replies must be put back in order.
	ks := make([]string, 8)
	for i := range ks {
		ks[i] = f.key(fmt.Sprintf("k%d", i))
	}
	h := f.key("hash")
	f.mustDo(t, rclient.Cmd("HSET", h, "f", "v"))
	cs := []rclient.Command{rclient.Cmd("GET", h)} // WRONGTYPE first
	want := []any{nil}
	for i, k := range ks {
		cs = append(cs, rclient.Cmd("SET", k, fmt.Sprint(i)), rclient.Cmd("INCR", k))
		want = append(want, "OK", int64(i+1))
	}
	cs = append(cs, rclient.Cmd("GET", f.key("missing")), rclient.Cmd("GET", h), rclient.Cmd("GET", ks[3]))
	want = append(want, nil, nil, "4")
	wantErr := map[int]string{0: "WRONGTYPE", len(cs) - 2: "WRONGTYPE"}

	res := f.c.DoMulti(ctxFor(t, 10*time.Second), cs...)
	if len(res) != len(cs) {
		t.Fatalf("got %d results for %d commands", len(res), len(cs))
	}
	for i, r := range res {
		if prefix, ok := wantErr[i]; ok {
			var re *rclient.RedisError
			if !errors.As(r.Err, &re) || !strings.HasPrefix(re.Msg, prefix) {
				t.Errorf("result %d (%v): got (%v, %v), want RedisError %s", i, cs[i], r.Val, r.Err, prefix)
			}
			continue
		}
		if r.Err != nil || !reflect.DeepEqual(r.Val, want[i]) {
			t.Errorf("result %d (%v): got (%#v, %v), want %#v", i, cs[i], r.Val, r.Err, want[i])
		}
	}
}

// masters returns a go-redis client per master, to see and flush scripts
// node by node.
func masters(t *testing.T, f *fixture) []*redis.Client {
	t.Helper()
	var cs []*redis.Client
	for _, addr := range f.tp.srv.Addrs {
		c := redis.NewClient(&redis.Options{Addr: addr, Password: f.tp.srv.Password, DisableIdentity: true})
		t.Cleanup(func() { _ = c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// loadedOn counts the masters that have sha cached.
func loadedOn(t *testing.T, f *fixture, sha string) int {
	t.Helper()
	n := 0
	for _, c := range masters(t, f) {
		ok, err := c.ScriptExists(ctxFor(t, 10*time.Second), sha).Result()
		if err != nil {
			t.Fatalf("SCRIPT EXISTS: %v", err)
		}
		if ok[0] {
			n++
		}
	}
	return n
}

func flushScripts(t *testing.T, f *fixture) {
	t.Helper()
	for _, c := range masters(t, f) {
		if err := c.ScriptFlush(ctxFor(t, 10*time.Second)).Err(); err != nil {
			t.Fatalf("SCRIPT FLUSH: %v", err)
		}
	}
}

func testScriptLifecycle(t *testing.T, f *fixture) {
	// The prefix makes the source, so the SHA, unique to this run of the case.
	tag := fmt.Sprintf("%s%d", f.prefix, time.Now().UnixNano())
	s := rclient.NewScript("echo", fmt.Sprintf("-- %s\nreturn {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1] .. ':n')}", tag))
	k := f.key("{s}")
	run := func(step string, wantN int64) {
		t.Helper()
		v, err := f.c.Run(ctxFor(t, 10*time.Second), s, []string{k}, []string{"arg"})
		if err != nil {
			t.Fatalf("%s: Run: %v", step, err)
		}
		if want := []any{k, "arg", wantN}; !reflect.DeepEqual(v, want) {
			t.Fatalf("%s: Run = %#v, want %#v", step, v, want)
		}
	}
	nodes := len(f.tp.srv.Addrs)
	if n := loadedOn(t, f, s.SHA); n != 0 {
		t.Fatalf("fresh script already on %d masters", n)
	}
	run("not loaded (NOSCRIPT, then EVAL)", 1)
	if n := loadedOn(t, f, s.SHA); n != 1 {
		t.Errorf("after the EVAL fallback the script is on %d masters, want 1", n)
	}
	if err := f.c.Load(ctxFor(t, 10*time.Second), s); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if n := loadedOn(t, f, s.SHA); n != nodes {
		t.Errorf("after Load the script is on %d masters, want %d", n, nodes)
	}
	run("loaded", 2)
	flushScripts(t, f)
	run("after SCRIPT FLUSH", 3)
}

func testScriptErrorReply(t *testing.T, f *fixture) {
	k := f.key("lease")
	for _, tc := range []struct{ src, wantMsg string }{
		// Redis 7.0 puts "ERR " before a one-word error_reply; the Msg is
		// what Redis sent, from both adapters.
		{"return redis.error_reply('LEASE_LOST')", "ERR LEASE_LOST"},
		{"return redis.error_reply('LEASE_LOST job 7 owned by w2')", "LEASE_LOST job 7 owned by w2"},
		{"return {err = 'LEASE_LOST'}", "LEASE_LOST"},
	} {
		s := rclient.NewScript("lease", fmt.Sprintf("-- %s%d\n%s", f.prefix, time.Now().UnixNano(), tc.src))
		for _, step := range []string{"via EVAL fallback", "via EVALSHA"} {
			v, err := f.c.Run(ctxFor(t, 10*time.Second), s, []string{k}, nil)
			var re *rclient.RedisError
			if !errors.As(err, &re) {
				t.Fatalf("%s %s: got (%v, %v), want *RedisError", tc.src, step, v, err)
			}
			if re.Msg != tc.wantMsg || !strings.Contains(err.Error(), "LEASE_LOST") {
				t.Errorf("%s %s: Msg %q (error %q), want %q", tc.src, step, re.Msg, err, tc.wantMsg)
			}
		}
	}
}

func testDoBlocking(t *testing.T, f *fixture) {
	stream, group := f.key("stream"), "g"
	f.mustDo(t, cmd([]string{"XGROUP", "CREATE"}, []string{stream}, group, "$", "MKSTREAM"))
	read := func(block string) rclient.Command {
		return cmd([]string{"XREADGROUP", "GROUP", group, "c1", "COUNT", "1", "BLOCK", block, "STREAMS"},
			[]string{stream}, ">")
	}

	// Empty stream: nil after the BLOCK time, not an error.
	start := time.Now()
	v, err := f.c.DoBlocking(ctxFor(t, 10*time.Second), read("200"))
	took := time.Since(start)
	if err != nil || v != nil {
		t.Fatalf("BLOCK 200 on an empty stream: got (%#v, %v), want (nil, nil)", v, err)
	}
	if took < 180*time.Millisecond {
		t.Errorf("BLOCK 200 returned after %v", took)
	}

	// An XADD from another goroutine wakes it early.
	added := make(chan string, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		id, err := f.c.Do(context.Background(), cmd([]string{"XADD"}, []string{stream}, "*", "job", "j1"))
		if err != nil {
			t.Errorf("XADD: %v", err)
		}
		s, _ := id.(string)
		added <- s
	}()
	start = time.Now()
	v, err = f.c.DoBlocking(ctxFor(t, 40*time.Second), read("30000"))
	took = time.Since(start)
	id := <-added
	if err != nil {
		t.Fatalf("BLOCK 3000 woken by XADD: %v", err)
	}
	// Woken, not timed out: the bound sits far below the BLOCK time so a
	// loaded machine cannot fail it, and far above the 100ms the wake needs.
	if took > 15*time.Second {
		t.Errorf("BLOCK 30000 took %v although an entry arrived after 100ms", took)
	}
	want := map[string]any{stream: []any{[]any{id, []any{"job", "j1"}}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("XREADGROUP = %#v, want %#v", v, want)
	}

	// BLOCK 0 waits forever in Redis; the context ends it.
	ctx := ctxFor(t, 300*time.Millisecond)
	start = time.Now()
	v, err = f.c.DoBlocking(ctx, read("0"))
	took = time.Since(start)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("BLOCK 0 with a 300ms deadline: got (%v, %v), want a deadline error", v, err)
	}
	if took > 10*time.Second {
		t.Errorf("BLOCK 0 with a 300ms deadline returned after %v", took)
	}
	// The blocking connection was abandoned; the next one must work.
	if v, err := f.c.DoBlocking(ctxFor(t, 10*time.Second), read("50")); err != nil || v != nil {
		t.Errorf("BLOCK 50 after an abandoned BLOCK: got (%v, %v), want (nil, nil)", v, err)
	}
}

func testPaused(t *testing.T, f *fixture) {
	k := f.key("k")
	f.mustDo(t, rclient.Cmd("SET", k, "before"))
	if err := f.tp.srv.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := f.tp.srv.Resume(); err != nil {
				t.Fatalf("Resume: %v", err)
			}
		}
	}
	defer resume()

	check := func(what string, call func(ctx context.Context) error) {
		t.Helper()
		ctx := ctxFor(t, 300*time.Millisecond)
		start := time.Now()
		err := call(ctx)
		took := time.Since(start)
		if err == nil {
			t.Errorf("%s on a paused Redis: no error", what)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a paused Redis: %v, want it to wrap context.DeadlineExceeded", what, err)
		}
		if took > 10*time.Second {
			t.Errorf("%s on a paused Redis returned after %v, deadline was 300ms", what, took)
		}
	}
	check("Do", func(ctx context.Context) error {
		_, err := f.c.Do(ctx, rclient.Cmd("GET", k))
		return err
	})
	check("DoMulti", func(ctx context.Context) error {
		res := f.c.DoMulti(ctx, rclient.Cmd("GET", k), rclient.Cmd("SET", k, "x"))
		for _, r := range res {
			if r.Err == nil {
				return nil
			}
		}
		return res[0].Err
	})
	resume()

	// A call abandoned at its deadline leaves rueidis re-dialling; the first
	// call after Resume may still fail while it does (see withDeadline). The
	// client must be working again within a few seconds.
	var err error
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		if _, err = f.c.Do(ctxFor(t, time.Second), rclient.Cmd("PING", k)); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("client not working 5s after Resume: %v", err)
	}
	if v := f.mustDo(t, rclient.Cmd("GET", k)); v != "before" && v != "x" {
		t.Errorf("GET after Resume = %#v", v)
	}
	f.mustDo(t, rclient.Cmd("SET", k, "after"))
	if v := f.mustDo(t, rclient.Cmd("GET", k)); v != "after" {
		t.Errorf("GET after Resume = %#v, want after", v)
	}
}

// twoSlots returns two keys that hash to different slots.
func twoSlots(f *fixture) (string, string) {
	a := f.key("{a}")
	for i := 0; ; i++ {
		b := f.key(fmt.Sprintf("{b%d}", i))
		if rclient.Slot(a) != rclient.Slot(b) {
			return a, b
		}
	}
}

func testCrossSlot(t *testing.T, f *fixture) {
	a, b := twoSlots(f)
	del := cmd([]string{"DEL"}, []string{a, b})
	s := rclient.NewScript("two", "return #KEYS")
	calls := map[string]func(ctx context.Context) (any, error){
		"Do":         func(ctx context.Context) (any, error) { return f.c.Do(ctx, del) },
		"DoBlocking": func(ctx context.Context) (any, error) { return f.c.DoBlocking(ctx, del) },
		"Run": func(ctx context.Context) (any, error) {
			return f.c.Run(ctx, s, []string{a, b}, nil)
		},
		"DoMulti": func(ctx context.Context) (any, error) {
			res := f.c.DoMulti(ctx, rclient.Cmd("SET", a, "1"), rclient.Cmd("GET", a), del)
			if res[0].Err != nil || res[1].Err != nil || res[1].Val != "1" {
				t.Errorf("DoMulti: the commands beside the cross-slot one failed: %+v", res)
			}
			return res[2].Val, res[2].Err
		},
	}
	for name, call := range calls {
		v, err := call(ctxFor(t, 10*time.Second))
		if f.cluster() {
			if !errors.Is(err, rclient.ErrCrossSlot) {
				t.Errorf("%s with keys in slots %d and %d: got (%v, %v), want ErrCrossSlot",
					name, rclient.Slot(a), rclient.Slot(b), v, err)
			}
		} else if err != nil {
			t.Errorf("%s with keys in two slots on a standalone server: %v", name, err)
		}
	}
}

func testSlotMatchesServer(t *testing.T, f *fixture) {
	if !f.cluster() {
		t.Skip("CLUSTER KEYSLOT needs a cluster")
	}
	for _, k := range []string{"", "a", "job:123", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap",
		"foo{bar}{zap}", "{", "}{", "a{b", f.key("{x}")} {
		got := f.mustDo(t, rclient.Command{Head: []string{"CLUSTER", "KEYSLOT", k}})
		if got != int64(rclient.Slot(k)) {
			t.Errorf("Slot(%q) = %d, CLUSTER KEYSLOT = %v", k, rclient.Slot(k), got)
		}
	}
}

// TestBlockOutlivesReadTimeout checks that DoBlocking waits on its context
// only: 5.5s is past go-redis's default read timeout, which its cluster
// client would give every node unless told otherwise. The four calls run at
// once in goroutines: t.Parallel would be capped by -parallel (GOMAXPROCS).
func TestBlockOutlivesReadTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5.5s")
	}
	var wg sync.WaitGroup
	for _, tp := range topologies {
		for _, lib := range rclient.Names() {
			f := &fixture{c: newClient(t, lib, tp), tp: tp, prefix: fmt.Sprintf("rct:%s:%s:long:", lib, tp.name)}
			ctx := ctxFor(t, 30*time.Second)
			wg.Go(func() {
				start := time.Now()
				v, err := f.c.DoBlocking(ctx, cmd([]string{"BZPOPMIN"}, []string{f.key("z")}, "5.5"))
				took := time.Since(start)
				if err != nil || v != nil {
					t.Errorf("%s/%s: BZPOPMIN 5.5s: got (%v, %v) after %v, want (nil, nil)", lib, tp.name, v, err, took)
				} else if took < 5400*time.Millisecond {
					t.Errorf("%s/%s: BZPOPMIN 5.5s returned after %v", lib, tp.name, took)
				}
			})
		}
	}
	wg.Wait()
}

func TestNew(t *testing.T) {
	_, err := rclient.New("redigo", rclient.Options{Addrs: []string{"127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "go-redis") || !strings.Contains(err.Error(), "rueidis") {
		t.Errorf("New(redigo) = %v, want an error listing go-redis and rueidis", err)
	}
	for _, lib := range rclient.Names() {
		for _, o := range []rclient.Options{{}, {Addrs: []string{"a:1", "b:2"}}} {
			if c, err := rclient.New(lib, o); err == nil {
				c.Close()
				t.Errorf("New(%s, %+v) succeeded", lib, o)
			}
		}
	}
}

func TestSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"123456789", 0x31C3}, // the CRC16-XMODEM check value
		{"", 0},
		{"foo", 12182},
		{"{foo}bar", 12182},
		{"x{foo}y{z}", 12182},
	} {
		if got := rclient.Slot(tc.key); got != tc.want {
			t.Errorf("Slot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	if rclient.Slot("foo{}{bar}") == rclient.Slot("bar") {
		t.Error("an empty hash tag must hash the whole key")
	}
	if rclient.Slot("foo{{bar}}zap") != rclient.Slot("{bar") {
		t.Error("the tag runs from the first '{' to the next '}'")
	}
}
