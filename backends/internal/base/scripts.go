package base

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

//go:embed lua
var libFS embed.FS

// Scripts is a backend's set of scripts for one encoding, by name: the
// functions of one Redis function library, loaded once per server, or on a
// server without Functions (before Redis 7) one script per body.
type Scripts struct {
	lib   *rclient.Library
	fns   map[string]string          // script name -> function name
	evals map[string]*rclient.Script // when the server has no Functions
}

// Script is a handle on one Lua body: lua/<name>.lua of the backend that
// declares it, or of lua/shared/. Backends declare their handles as named
// values beside the Go that calls them (asynq's internal/rdb habit), and
// every call site names a handle, never a string, so a misspelt script is a
// compile error; TestScriptHandles checks that every handle has its body
// and that the body opens with the one fixed header: "-- <name>: what it
// does", then KEYS, ARGV, Returns and Complexity lines, in that order.
type Script struct{ name string }

// NewScript returns the handle of the body lua/<name>.lua.
func NewScript(name string) Script { return Script{name: name} }

// Name is the body's file name without .lua.
func (s Script) Name() string { return s.name }

// ScriptEnqueue is every backend's own lua/enqueue.lua: Run follows it
// with WAIT when Options.WaitReplicas asks for it.
var ScriptEnqueue = NewScript("enqueue")

// Shared script bodies (lua/shared/) that a backend may take as they are.
var (
	ScriptExtend       = NewScript("extend")
	ScriptComplete     = NewScript("complete")
	ScriptCompleteMany = NewScript("complete_many")
	ScriptLocate       = NewScript("locate")
	// ScriptExpire is Recover's sweep of the expiry index (Keys.Expire);
	// every library has it, since every Core's Recover runs it.
	ScriptExpire = NewScript("expire")
	// ScriptLeave ends a waiter's registration (lib.lua's hand-off); every
	// library has it, since every Core's BlockClaim may run it.
	ScriptLeave = NewScript("leave")
)

// ComposeScripts builds each body in bodies (read from the backend's embedded
// lua/ folder; the file name without .lua is the script's name) and each
// shared body named in shared, on top of the encoding's record prelude and
// the shared library, and loads them on c.
//
// The whole is one function library (FUNCTION LOAD, on every master): the
// prelude, lib.lua and lib_stream.lua are compiled once per server, and a call costs the
// body's own work only, where an EVALSHA of the same text sets the whole
// library up again on every call. The library's name carries a hash of its
// source, so stores of different versions can share a server. A server that
// refuses FUNCTION gets one EVALSHA script per body.
func ComposeScripts(ctx context.Context, c rclient.Client, enc jobstore.Encoding, bodies embed.FS, shared ...Script) (Scripts, error) {
	prelude, err := libFS.ReadFile("lua/rec_" + string(enc) + ".lua")
	if err != nil {
		return Scripts{}, fmt.Errorf("encoding %q has no record prelude: %w", enc, err)
	}
	head := string(prelude) + "\n"
	for _, part := range []string{"lua/lib.lua", "lua/lib_stream.lua"} {
		lib, err := libFS.ReadFile(part)
		if err != nil {
			return Scripts{}, err
		}
		head += string(lib) + "\n"
	}
	src, err := readBodies(bodies, shared)
	if err != nil {
		return Scripts{}, err
	}
	out, err := loadLibrary(ctx, c, head, src)
	if err == nil || !noFunctions(err) {
		return out, err
	}
	out = Scripts{evals: map[string]*rclient.Script{}}
	for name, body := range src {
		s := rclient.NewScript(name, head+body)
		if err := c.Load(ctx, s); err != nil {
			return Scripts{}, fmt.Errorf("load script %s: %w", name, err)
		}
		out.evals[name] = s
	}
	return out, nil
}

// readBodies reads the shared bodies named and every body of the backend.
func readBodies(bodies embed.FS, shared []Script) (map[string]string, error) {
	src := map[string]string{}
	for _, sc := range append(shared, ScriptExpire, ScriptLeave) {
		name := sc.name
		body, err := libFS.ReadFile("lua/shared/" + name + ".lua")
		if err != nil {
			return nil, fmt.Errorf("no shared script %q: %w", name, err)
		}
		src[name] = string(body)
	}
	files, err := bodies.ReadDir("lua")
	if err != nil {
		return nil, fmt.Errorf("backend scripts: %w", err)
	}
	for _, f := range files {
		name, ok := strings.CutSuffix(f.Name(), ".lua")
		if !ok {
			continue
		}
		body, err := bodies.ReadFile("lua/" + f.Name())
		if err != nil {
			return nil, err
		}
		src[name] = string(body)
	}
	return src, nil
}

// loadLibrary wraps each body in a registered function. KEYS and ARGV are
// the library's own locals, set at the start of every call, so the shared
// code reads them as a script does; rec_reset empties what the record
// prelude caches, since a library's locals outlive one call.
func loadLibrary(ctx context.Context, c rclient.Client, head string, src map[string]string) (Scripts, error) {
	names := make([]string, 0, len(src))
	for n := range src {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("local KEYS, ARGV = {}, {}\n")
	b.WriteString(head)
	for _, n := range names {
		fmt.Fprintf(&b, "redis.register_function('@@_%s', function(keys, args)\nKEYS, ARGV = keys, args\nrec_reset()\n%s\nend)\n", n, src[n])
	}
	sum := sha1.Sum([]byte(b.String()))
	libName := "aebench_" + hex.EncodeToString(sum[:8])
	body := strings.ReplaceAll(b.String(), "'@@_", "'"+libName+"_")
	out := Scripts{lib: &rclient.Library{Name: libName, Src: "#!lua name=" + libName + "\n" + body}, fns: map[string]string{}}
	for _, n := range names {
		out.fns[n] = libName + "_" + n
	}
	if err := loadWithRetry(ctx, c, out.lib); err != nil {
		return Scripts{}, fmt.Errorf("load library %s: %w", libName, err)
	}
	return out, nil
}

// loadWithRetry loads the library, trying again (up to 3 times) when a
// node timed out while ctx still has time: FUNCTION LOAD REPLACE is
// idempotent, and on a loaded machine a cluster node's first connection
// can take longer than the client's dial timeout (a fresh-clone CI run
// failed so once). Any other error returns at once.
func loadWithRetry(ctx context.Context, c rclient.Client, lib *rclient.Library) error {
	var err error
	for range 3 {
		if err = c.LoadLibrary(ctx, lib); err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return err
}

// noFunctions reports an error of a server that does not know FUNCTION,
// or of a user it does not allow FUNCTION LOAD (a managed service's ACL):
// both leave the scripts to EVALSHA.
func noFunctions(err error) bool {
	var re *rclient.RedisError
	if !errors.As(err, &re) {
		return false
	}
	m := strings.ToLower(re.Msg)
	return strings.Contains(m, "unknown command") || strings.Contains(m, "noperm")
}

// run runs the named script on c.
func (s Scripts) run(ctx context.Context, c rclient.Client, name string, keys, args []string) (any, error) {
	if fn, ok := s.fns[name]; ok {
		return c.Call(ctx, s.lib, fn, keys, args)
	}
	if sc, ok := s.evals[name]; ok {
		return c.Run(ctx, sc, keys, args)
	}
	return nil, fmt.Errorf("no script %q", name)
}

// runWait is run for a function followed by WAIT on its connection
// (rclient.Waiter); a replica count short of replicas after the timeout is
// no error: the write stands, less replicated than asked.
func (s Scripts) runWait(ctx context.Context, w rclient.Waiter, name string, keys, args []string, replicas int, timeout time.Duration) (any, error) {
	fn, ok := s.fns[name]
	if !ok {
		return nil, fmt.Errorf("script %q is not a function: WAIT after it is not supported", name)
	}
	v, acked, err := w.CallWait(ctx, s.lib, fn, keys, args, replicas, timeout)
	if err == nil && acked < replicas {
		// The write is on the master only: not acknowledged, since a
		// failover now would lose it.
		return v, fmt.Errorf("%w: WAIT %d %v: %d replica(s) confirmed", jobstore.ErrNotReplicated, replicas, timeout, acked)
	}
	return v, err
}
