package rclient

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// goRedisClient is the part of *redis.Client and *redis.ClusterClient the
// adapter uses.
type goRedisClient interface {
	Process(ctx context.Context, cmd redis.Cmder) error
	Pipeline() redis.Pipeliner
	Ping(ctx context.Context) *redis.StatusCmd
	Close() error
}

type goRedisAdapter struct {
	o       Options
	cluster bool
	c       goRedisClient // Do, DoMulti, Run, Load
	// bc serves DoBlocking from a pool of its own, with no read timeout
	// but the context's: go-redis cannot give a raw Do command the longer
	// read timeout its typed blocking commands get.
	bc goRedisClient
	// reloaded is when a network error last made the cluster clients
	// reload their slot map (unix ns); see result.
	reloaded atomic.Int64
}

// NewGoRedis returns a Client on github.com/redis/go-redis/v9: a
// *redis.Client, or a *redis.ClusterClient when o.Cluster is set.
//
// Mode: plain pooled connections, one command per connection at a time, no
// auto-pipeliner. DoMulti is one go-redis Pipeline (split per node on a
// cluster). DoBlocking goes through a second client with a pool of its own
// (up to max(PoolSize, 1024) connections per node), so blocked calls never
// take connections from Do.
//
// Protocol: RESP3, go-redis's default, set explicitly: maps, doubles and
// booleans exist only in RESP3, and rueidis speaks it too, so both adapters
// return the same shapes for the same command.
//
// Context deadlines bound socket I/O (ContextTimeoutEnabled). Without one,
// reads and writes give up after 10s; DoBlocking reads wait on the context
// only, so BLOCK n waits its n. Retries are off (MaxRetries -1): a write
// re-sent after a timeout could run twice, which a job-store benchmark must
// see, not hide. A cluster client still follows MOVED/ASK and, while its
// context lasts, retries after a network error (go-redis's MaxRedirects loop,
// which cannot be turned off without losing redirections).
func NewGoRedis(o Options) (Client, error) {
	if err := o.check(GoRedis); err != nil {
		return nil, err
	}
	a := &goRedisAdapter{o: o, cluster: o.Cluster}
	maint := func() *maintnotifications.Config {
		// Auto mode would try CLIENT MAINT_NOTIFICATIONS on every connection.
		return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	}
	// blockingRead is the ReadTimeout of the DoBlocking client: -1 leaves only
	// the context's deadline on reads, so BLOCK n waits its n.
	const blockingRead = -1
	if o.Cluster {
		mk := func(read time.Duration, pool int) *redis.ClusterClient {
			return redis.NewClusterClient(&redis.ClusterOptions{
				Addrs:                    o.Addrs,
				Username:                 o.Username,
				Password:                 o.Password,
				TLSConfig:                o.TLS,
				Protocol:                 3,
				DialTimeout:              o.dialTimeout(),
				ReadTimeout:              read,
				WriteTimeout:             ioTimeout,
				ContextTimeoutEnabled:    true,
				PoolSize:                 pool,
				MaxRetries:               -1,
				DisableIdentity:          true, // CLIENT SETINFO is Redis 7.2+
				DisableRoutingPolicies:   true, // one command, one node: no fan-out
				MaintNotificationsConfig: maint(),
				Dialer:                   mappedDialer(o),
				NewClient: func(no *redis.Options) *redis.Client {
					// ClusterOptions turns ReadTimeout -1 into 0, which the
					// node clients then read as "default 5s".
					if read == blockingRead {
						no.ReadTimeout = blockingRead
					}
					return redis.NewClient(no)
				},
			})
		}
		a.c = mk(ioTimeout, o.PoolSize)
		a.bc = mk(blockingRead, max(o.PoolSize, blockingPoolSize))
	} else {
		mk := func(read time.Duration, pool int) *redis.Client {
			return redis.NewClient(&redis.Options{
				Addr:                     o.Addrs[0],
				Username:                 o.Username,
				Password:                 o.Password,
				TLSConfig:                o.TLS,
				DB:                       o.DB,
				Protocol:                 3,
				DialTimeout:              o.dialTimeout(),
				ReadTimeout:              read,
				WriteTimeout:             ioTimeout,
				ContextTimeoutEnabled:    true,
				PoolSize:                 pool,
				MaxRetries:               -1,
				DisableIdentity:          true,
				MaintNotificationsConfig: maint(),
			})
		}
		a.c = mk(ioTimeout, o.PoolSize)
		a.bc = mk(blockingRead, max(o.PoolSize, blockingPoolSize))
	}
	// go-redis connects lazily; ping so that a wrong address fails here, as
	// it does for rueidis.
	ctx, cancel := context.WithTimeout(context.Background(), 2*o.dialTimeout())
	defer cancel()
	if err := a.c.Ping(ctx).Err(); err != nil {
		a.Close()
		return nil, fmt.Errorf("rclient: go-redis: ping %v: %w", o.Addrs, err)
	}
	return a, nil
}

func (a *goRedisAdapter) Name() string { return GoRedis }

// Options implements Configured.
func (a *goRedisAdapter) Options() Options { return a.o }

func (a *goRedisAdapter) Close() error {
	return errors.Join(a.c.Close(), a.bc.Close())
}

func (a *goRedisAdapter) Do(ctx context.Context, c Command) (any, error) {
	return a.do(ctx, a.c, c)
}

func (a *goRedisAdapter) DoBlocking(ctx context.Context, c Command) (any, error) {
	return a.do(ctx, a.bc, c)
}

func (a *goRedisAdapter) do(ctx context.Context, cl goRedisClient, c Command) (any, error) {
	if err := checkCommand(c, a.cluster); err != nil {
		return nil, err
	}
	cmd := goRedisCmd(ctx, c)
	_ = cl.Process(ctx, cmd) // the error is also in cmd
	return a.result(ctx, &c, cmd)
}

func (a *goRedisAdapter) DoMulti(ctx context.Context, cs ...Command) []Result {
	out := make([]Result, len(cs))
	cmds := make([]*redis.Cmd, len(cs))
	pipe := a.c.Pipeline()
	queued := 0
	for i, c := range cs {
		if err := checkCommand(c, a.cluster); err != nil {
			out[i].Err = err
			continue
		}
		cmds[i] = goRedisCmd(ctx, c)
		_ = pipe.Process(ctx, cmds[i])
		queued++
	}
	if queued > 0 {
		_, _ = pipe.Exec(ctx) // per-command errors are in the commands
	}
	for i, cmd := range cmds {
		if cmd != nil {
			out[i].Val, out[i].Err = a.result(ctx, &cs[i], cmd)
		}
	}
	return out
}

func (a *goRedisAdapter) Run(ctx context.Context, s *Script, keys, args []string) (any, error) {
	return runScript(ctx, a.Do, s, keys, args)
}

func (a *goRedisAdapter) Load(ctx context.Context, s *Script) error {
	c := Command{Head: []string{"SCRIPT", "LOAD", s.Src}}
	return a.eachMaster(ctx, "script "+s.Name, c, func(v any) error {
		if v != s.SHA {
			return fmt.Errorf("server SHA %v, want %s", v, s.SHA)
		}
		return nil
	})
}

func (a *goRedisAdapter) Call(ctx context.Context, l *Library, fn string, keys, args []string) (any, error) {
	return callFunction(ctx, a.Do, a.LoadLibrary, l, fn, keys, args)
}

func (a *goRedisAdapter) LoadLibrary(ctx context.Context, l *Library) error {
	return a.eachMaster(ctx, "library "+l.Name, loadLibraryCommand(l), func(any) error { return nil })
}

// eachMaster runs c on every master (the one server when standalone),
// checking each reply with check; it reports every node's error, not only
// the first one as ForEachMaster does.
func (a *goRedisAdapter) eachMaster(ctx context.Context, what string, c Command, check func(any) error) error {
	run := func(ctx context.Context, n *redis.Client) error {
		cmd := goRedisCmd(ctx, c)
		_ = n.Process(ctx, cmd)
		v, err := goRedisResult(ctx, &c, cmd)
		if err == nil {
			err = check(v)
		}
		if err != nil {
			return fmt.Errorf("%s: %s on %s: %w", what, c.Head[0], n.Options().Addr, err)
		}
		return nil
	}
	switch cl := a.c.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		var errs []error
		err := cl.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			err := run(ctx, n)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return err
		})
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, ioError(ctx, GoRedis, &c, err))
		}
		return nil
	case *redis.Client:
		return run(ctx, cl)
	}
	return fmt.Errorf("rclient: go-redis: unexpected client type %T", a.c)
}

func goRedisCmd(ctx context.Context, c Command) *redis.Cmd {
	// Every word goes in as *string, which go-redis writes, names and
	// routes like a string: a string in an interface is one allocation
	// each, about fifteen a job. They point into c's slices, which nobody
	// changes after the call.
	args := make([]any, 0, len(c.Head)+len(c.Keys)+len(c.Args))
	for i := range c.Head {
		args = append(args, &c.Head[i])
	}
	for i := range c.Keys {
		args = append(args, &c.Keys[i])
	}
	for i := range c.Args {
		args = append(args, &c.Args[i])
	}
	cmd := redis.NewCmd(ctx, args...)
	if len(c.Keys) > 0 && len(c.Head) < 128 {
		// Route by our first key, not by go-redis's guess from COMMAND INFO,
		// which does not know where a raw command's keys start.
		cmd.SetFirstKeyPos(int8(len(c.Head)))
	}
	return cmd
}

// reloadEvery bounds how often network errors reload the slot map.
const reloadEvery = 250 * time.Millisecond

// result is goRedisResult, and on a cluster a network error also makes
// both clients reload their slot map (at most every reloadEvery). With
// retries off, go-redis reloads it on MOVED only, which a dead master
// never sends: without this it would dial the dead node for good after a
// failover (rueidis refreshes by itself).
func (a *goRedisAdapter) result(ctx context.Context, c *Command, cmd *redis.Cmd) (any, error) {
	v, err := goRedisResult(ctx, c, cmd)
	if err == nil || !a.cluster {
		return v, err
	}
	// Declared past the common path: errors.As moves it to the heap, an
	// allocation a command.
	var re *RedisError
	if !errors.As(err, &re) && ctx.Err() == nil {
		now, last := time.Now().UnixNano(), a.reloaded.Load()
		if now-last >= int64(reloadEvery) && a.reloaded.CompareAndSwap(last, now) {
			for _, cl := range []goRedisClient{a.c, a.bc} {
				if cc, ok := cl.(*redis.ClusterClient); ok {
					cc.ReloadState(ctx)
				}
			}
		}
	}
	return v, err
}

func goRedisResult(ctx context.Context, c *Command, cmd *redis.Cmd) (any, error) {
	v, err := cmd.Result()
	switch {
	case err == nil:
		return fromGoRedis(v), nil
	case errors.Is(err, redis.Nil):
		return nil, nil
	}
	var re redis.Error
	if errors.As(err, &re) {
		return nil, &RedisError{Msg: re.Error()}
	}
	return nil, ioError(ctx, GoRedis, c, err)
}

func fromGoRedis(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = fromGoRedis(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(k)
			}
			m[ks] = fromGoRedis(e)
		}
		return m
	case *big.Int:
		return x.String()
	case redis.Error: // an error element inside an array or map
		return &RedisError{Msg: x.Error()}
	}
	return v // nil, string, int64, float64, bool
}

// mappedDialer dials through Options.AddrMap; nil (go-redis's own dialer)
// without one.
func mappedDialer(o Options) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if len(o.AddrMap) == 0 {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: o.dialTimeout(), KeepAlive: 5 * time.Minute}
		return d.DialContext(ctx, network, o.dialAddr(addr))
	}
}
