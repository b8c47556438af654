package rclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Library names accepted by New and returned by Client.Name.
const (
	GoRedis = "go-redis"
	Rueidis = "rueidis"
)

const (
	defaultDialTimeout = 2 * time.Second
	// ioTimeout bounds socket I/O of calls whose context has no deadline, so
	// a silent server fails them instead of hanging them. It is rueidis's
	// own default (ConnWriteTimeout = 10 x KeepAlive), given to go-redis too
	// so that both libraries give up on a dead server after the same time.
	ioTimeout = 10 * time.Second
	// blockingPoolSize caps connections for DoBlocking. It is rueidis's
	// default, given to go-redis too so that neither pool is what limits a
	// benchmark with many blocked workers.
	blockingPoolSize = 1024
)

// Names lists the client libraries New accepts.
func Names() []string { return []string{GoRedis, Rueidis} }

// New returns the adapter for the named client library.
func New(name string, o Options) (Client, error) {
	switch name {
	case GoRedis:
		return NewGoRedis(o)
	case Rueidis:
		return NewRueidis(o)
	}
	return nil, fmt.Errorf("rclient: unknown client library %q (allowed: %s)",
		name, strings.Join(Names(), ", "))
}

func (o Options) dialTimeout() time.Duration {
	if o.DialTimeout > 0 {
		return o.DialTimeout
	}
	return defaultDialTimeout
}

func (o Options) check(lib string) error {
	if len(o.Addrs) == 0 {
		return fmt.Errorf("rclient: %s: no address", lib)
	}
	if !o.Cluster && len(o.Addrs) > 1 {
		return fmt.Errorf("rclient: %s: %d addresses for a standalone server; set Cluster or pass one",
			lib, len(o.Addrs))
	}
	return nil
}

// runScript is Client.Run for both adapters: do is the adapter's Do.
func runScript(ctx context.Context, do func(context.Context, Command) (any, error),
	s *Script, keys, args []string) (any, error) {
	n := strconv.Itoa(len(keys))
	v, err := do(ctx, Command{Head: []string{"EVALSHA", s.SHA, n}, Keys: keys, Args: args})
	if err == nil {
		return v, nil
	}
	var re *RedisError
	if !errors.As(err, &re) {
		return nil, fmt.Errorf("script %s: %w", s.Name, err)
	}
	if !strings.HasPrefix(re.Msg, "NOSCRIPT") {
		return nil, err
	}
	// EVAL also caches the script on that server, so the next EVALSHA hits.
	v, err = do(ctx, Command{Head: []string{"EVAL", s.Src, n}, Keys: keys, Args: args})
	if err != nil && !errors.As(err, &re) {
		return nil, fmt.Errorf("script %s: %w", s.Name, err)
	}
	return v, err
}

// callFunction is Client.Call for both adapters: do is the adapter's Do,
// load its LoadLibrary.
func callFunction(ctx context.Context, do func(context.Context, Command) (any, error),
	load func(context.Context, *Library) error, l *Library, fn string, keys, args []string) (any, error) {
	c := Command{Head: []string{"FCALL", fn, strconv.Itoa(len(keys))}, Keys: keys, Args: args}
	v, err := do(ctx, c)
	if err == nil {
		return v, nil // before re, which errors.As moves to the heap
	}
	var re *RedisError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "Function not found") {
		return v, err
	}
	if err := load(ctx, l); err != nil {
		return nil, fmt.Errorf("function %s: %w", fn, err)
	}
	return do(ctx, c)
}

// loadLibraryCommand is FUNCTION LOAD REPLACE: loading the same library
// again is then not an error, and a newer version replaces an older one.
func loadLibraryCommand(l *Library) Command {
	return Command{Head: []string{"FUNCTION", "LOAD", "REPLACE", l.Src}}
}

// Ended says whether ctx has ended: canceled, or past its deadline. A
// read whose socket deadline came from ctx (go-redis's
// ContextTimeoutEnabled) can time out before ctx's own timer has fired:
// on a loaded machine ctx.Err() is then still nil for a moment, and a call
// that ended with its context would read as a failed one.
func Ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// ioError wraps a network, timeout or client error. A socket deadline taken
// from ctx surfaces as an i/o timeout that is not context.DeadlineExceeded,
// and may fire a moment before ctx's own timer: the context error is added
// whenever the deadline has passed, so errors.Is works for callers.
func ioError(ctx context.Context, lib string, c *Command, err error) error {
	name := "command"
	if len(c.Head) > 0 {
		name = c.Head[0]
	}
	ctxErr := ctx.Err()
	if ctxErr == nil && Ended(ctx) {
		ctxErr = context.DeadlineExceeded
	}
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("rclient: %s %s: %w: %w", lib, name, ctxErr, err)
	}
	return fmt.Errorf("rclient: %s %s: %w", lib, name, err)
}
