package rclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

type rueidisAdapter struct {
	o       Options
	cluster bool
	c       rueidis.Client
}

// NewRueidis returns a Client on github.com/redis/rueidis.
//
// Mode: rueidis's default auto-pipelining: concurrent Do calls to one node
// share a connection and are written together, so one rueidis number
// measures a pipelined client, not a pooled one. DoBlocking commands are
// marked Blocking and take a connection of their own from rueidis's blocking
// pool. DoMulti is rueidis's DoMulti (grouped per node on a cluster).
//
// Protocol: RESP3, rueidis's default, the same as the go-redis adapter.
// Client-side caching is off (DisableCache); so are retries of read-only
// commands (DisableRetry), to match the go-redis adapter, which does not
// retry. Context deadlines bound every call; without one, a silent server
// is given up on after 10s (ConnWriteTimeout).
func NewRueidis(o Options) (Client, error) {
	if err := o.check(Rueidis); err != nil {
		return nil, err
	}
	opt := rueidis.ClientOption{
		InitAddress:       o.Addrs,
		Username:          o.Username,
		Password:          o.Password,
		TLSConfig:         o.TLS,
		Dialer:            net.Dialer{Timeout: o.dialTimeout(), KeepAlive: rueidis.DefaultTCPKeepAlive},
		ConnWriteTimeout:  ioTimeout,
		DisableCache:      true,
		DisableRetry:      true,
		ClientSetInfo:     rueidis.DisableClientSetInfo, // CLIENT SETINFO is Redis 7.2+
		ForceSingleClient: !o.Cluster,
		BlockingPoolSize:  blockingPoolSize,
	}
	if len(o.AddrMap) > 0 {
		opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			// Only spawned clusters map addresses (their replication
			// proxies), and they speak plain TCP.
			return d.DialContext(ctx, "tcp", o.dialAddr(addr))
		}
	}
	if !o.Cluster {
		opt.SelectDB = o.DB
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("rclient: rueidis: connect %v: %w", o.Addrs, err)
	}
	// With one address rueidis falls back to a single-node client when the
	// server is not a cluster; a benchmark labelled "cluster" must not
	// quietly run on one.
	if o.Cluster && c.Mode() != rueidis.ClientModeCluster {
		c.Close()
		return nil, fmt.Errorf("rclient: rueidis: %v is not a Redis Cluster (mode %s)", o.Addrs, c.Mode())
	}
	return &rueidisAdapter{o: o, cluster: o.Cluster, c: c}, nil
}

func (a *rueidisAdapter) Name() string { return Rueidis }

// Options implements Configured.
func (a *rueidisAdapter) Options() Options { return a.o }

func (a *rueidisAdapter) Close() error {
	a.c.Close()
	return nil
}

// build turns c into a rueidis command. rueidis panics on commands it will
// not send; checkCommand screens the known cases, and the recover keeps any
// other one an error, as the Client contract requires.
func (a *rueidisAdapter) build(c Command, blocking bool) (cmd rueidis.Completed, err error) {
	if err := checkCommand(c, a.cluster); err != nil {
		return cmd, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rclient: rueidis %s: %v", c.Head[0], p)
		}
	}()
	b := a.c.B().Arbitrary(c.Head...).Keys(c.Keys...).Args(c.Args...)
	if blocking {
		return b.Blocking(), nil
	}
	return b.Build(), nil
}

func (a *rueidisAdapter) Do(ctx context.Context, c Command) (any, error) {
	cmd, err := a.build(c, false)
	if err != nil {
		return nil, err
	}
	return rueidisResult(ctx, &c, withDeadline(ctx, func() rueidis.RedisResult { return a.c.Do(ctx, cmd) }))
}

// withDeadline returns f's result, or an error result as soon as ctx ends.
// rueidis v1.0.79 lets a call wait for another goroutine's reconnect for up to
// DialTimeout whatever the caller's deadline (mux.go), which breaks the
// contract that a call against an unreachable Redis returns within its
// context deadline. Only calls whose context can end pay for the goroutine;
// f keeps running to its own bound and its result is dropped. The price:
// after an outage, the first call may fail while rueidis re-dials.
func withDeadline(ctx context.Context, f func() rueidis.RedisResult) rueidis.RedisResult {
	if ctx.Done() == nil {
		return f()
	}
	ch := make(chan rueidis.RedisResult, 1)
	go func() { ch <- f() }()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return rueidis.NewErrorResult(ctx.Err())
	}
}

func (a *rueidisAdapter) DoBlocking(ctx context.Context, c Command) (any, error) {
	cmd, err := a.build(c, true)
	if err != nil {
		return nil, err
	}
	return rueidisResult(ctx, &c, withDeadline(ctx, func() rueidis.RedisResult { return a.c.Do(ctx, cmd) }))
}

func (a *rueidisAdapter) DoMulti(ctx context.Context, cs ...Command) []Result {
	out := make([]Result, len(cs))
	cmds := make([]rueidis.Completed, 0, len(cs))
	idx := make([]int, 0, len(cs)) // cmds[j] is cs[idx[j]]
	for i, c := range cs {
		cmd, err := a.build(c, false)
		if err != nil {
			out[i].Err = err
			continue
		}
		cmds = append(cmds, cmd)
		idx = append(idx, i)
	}
	if len(cmds) == 0 {
		return out
	}
	var rs []rueidis.RedisResult
	if ctx.Done() == nil {
		rs = a.c.DoMulti(ctx, cmds...)
	} else {
		ch := make(chan []rueidis.RedisResult, 1)
		go func() { ch <- a.c.DoMulti(ctx, cmds...) }()
		select {
		case rs = <-ch:
		case <-ctx.Done():
			rs = make([]rueidis.RedisResult, len(cmds))
			for j := range rs {
				rs[j] = rueidis.NewErrorResult(ctx.Err())
			}
		}
	}
	for j, r := range rs {
		i := idx[j]
		out[i].Val, out[i].Err = rueidisResult(ctx, &cs[i], r)
	}
	return out
}

func (a *rueidisAdapter) Run(ctx context.Context, s *Script, keys, args []string) (any, error) {
	return runScript(ctx, a.Do, s, keys, args)
}

// Load sends SCRIPT LOAD to every node rueidis knows, replicas included: a
// replica answers it too, and a script there is ready if it is promoted.
func (a *rueidisAdapter) Load(ctx context.Context, s *Script) error {
	c := Command{Head: []string{"SCRIPT", "LOAD", s.Src}}
	return a.eachNode(ctx, "script "+s.Name, c, func(v any, err error) error {
		if err == nil && v != s.SHA {
			err = fmt.Errorf("server SHA %v, want %s", v, s.SHA)
		}
		return err
	})
}

func (a *rueidisAdapter) Call(ctx context.Context, l *Library, fn string, keys, args []string) (any, error) {
	return callFunction(ctx, a.Do, a.LoadLibrary, l, fn, keys, args)
}

// LoadLibrary sends FUNCTION LOAD REPLACE to every node rueidis knows. A
// replica refuses it (READONLY), which is no error: it gets the library
// from its master by replication.
func (a *rueidisAdapter) LoadLibrary(ctx context.Context, l *Library) error {
	return a.eachNode(ctx, "library "+l.Name, loadLibraryCommand(l), func(_ any, err error) error {
		var re *RedisError
		if errors.As(err, &re) && strings.HasPrefix(re.Msg, "READONLY") {
			return nil
		}
		return err
	})
}

// eachNode runs c on every node rueidis knows, at once, and joins what
// check makes of each reply.
func (a *rueidisAdapter) eachNode(ctx context.Context, what string, c Command, check func(any, error) error) error {
	nodes := a.c.Nodes()
	if len(nodes) == 0 {
		return fmt.Errorf("%s: rclient: rueidis knows no node", what)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for addr, n := range nodes {
		wg.Go(func() {
			v, err := rueidisResult(ctx, &c, n.Do(ctx, n.B().Arbitrary(c.Head...).Build()))
			if err = check(v, err); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %s on %s: %w", what, c.Head[0], addr, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func rueidisResult(ctx context.Context, c *Command, r rueidis.RedisResult) (any, error) {
	if err := r.NonRedisError(); err != nil {
		return nil, ioError(ctx, Rueidis, c, err)
	}
	m, _ := r.ToMessage() // a Redis error is in m too
	v, err := fromRueidis(&m)
	if err != nil {
		return nil, ioError(ctx, Rueidis, c, err)
	}
	if re, ok := v.(*RedisError); ok {
		return nil, re
	}
	return v, nil
}

// fromRueidis converts m without rueidis's ToAny, which strips a leading
// "ERR " from error replies; Msg must be what Redis sent. An error reply is
// returned as a *RedisError value, so that nested ones stay in place.
func fromRueidis(m *rueidis.RedisMessage) (any, error) {
	switch {
	case m.IsNil():
		return nil, nil
	case m.IsInt64():
		return m.AsInt64()
	case m.IsFloat64():
		return m.AsFloat64()
	case m.IsBool():
		return m.AsBool()
	case m.IsString():
		return m.ToString()
	case m.IsArray():
		ms, err := m.ToArray()
		if err != nil {
			return nil, err
		}
		vs := make([]any, len(ms))
		for i := range ms {
			if vs[i], err = fromRueidis(&ms[i]); err != nil {
				return nil, err
			}
		}
		return vs, nil
	case m.IsMap():
		ms, err := m.ToMap()
		if err != nil {
			return nil, err
		}
		vs := make(map[string]any, len(ms))
		for k, e := range ms {
			if vs[k], err = fromRueidis(&e); err != nil {
				return nil, err
			}
		}
		return vs, nil
	}
	// Error replies, verbatim strings and big numbers: ToString gives the
	// text as sent, and for an error reply also the (trimmed) error.
	s, err := m.ToString()
	if err != nil {
		if m.Error() != nil {
			return &RedisError{Msg: s}, nil
		}
		return nil, err
	}
	return s, nil
}
