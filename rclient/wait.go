package rclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Waiter is a Client that runs a function and then WAIT on the same
// connection. WAIT counts the replicas that acknowledged the writes of the
// connection it is sent on, so it must follow the write on that very
// connection: a pooled client's next free one may have written nothing.
// Both adapters New returns implement it.
type Waiter interface {
	// CallWait is Call followed by WAIT replicas timeout; acked is how many
	// replicas had the write when WAIT returned (fewer than replicas after
	// the timeout). WAIT makes no write durable: a failover can still drop
	// it; it narrows the window.
	CallWait(ctx context.Context, l *Library, fn string, keys, args []string, replicas int, timeout time.Duration) (v any, acked int, err error)
}

// waitCommand is WAIT replicas timeout-ms.
func waitCommand(replicas int, timeout time.Duration) Command {
	return Command{Head: []string{"WAIT", strconv.Itoa(replicas), strconv.FormatInt(timeout.Milliseconds(), 10)}}
}

// ackedOf reads WAIT's reply.
func ackedOf(v any, err error) (int, error) {
	if err != nil {
		return 0, fmt.Errorf("WAIT: %w", err)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("WAIT: reply %T, want an integer", v)
	}
	return int(n), nil
}

func (a *goRedisAdapter) CallWait(ctx context.Context, l *Library, fn string, keys, args []string, replicas int, timeout time.Duration) (any, int, error) {
	acked := 0
	do := func(ctx context.Context, c Command) (any, error) {
		if err := checkCommand(c, a.cluster); err != nil {
			return nil, err
		}
		node, err := a.nodeFor(ctx, c)
		if err != nil {
			return nil, ioError(ctx, GoRedis, &c, err)
		}
		// A pipeline of a *redis.Client runs on one connection.
		pipe := node.Pipeline()
		cmd, w := goRedisCmd(ctx, c), waitCommand(replicas, timeout)
		wcmd := goRedisCmd(ctx, w)
		_ = pipe.Process(ctx, cmd)
		_ = pipe.Process(ctx, wcmd)
		_, _ = pipe.Exec(ctx)
		v, err := a.result(ctx, &c, cmd)
		if err != nil {
			return v, err
		}
		acked, err = ackedOf(goRedisResult(ctx, &w, wcmd))
		return v, err
	}
	v, err := callFunction(ctx, do, a.LoadLibrary, l, fn, keys, args)
	return v, acked, err
}

// nodeFor is the *redis.Client of the master that holds c's first key (the
// one server when standalone).
func (a *goRedisAdapter) nodeFor(ctx context.Context, c Command) (*redis.Client, error) {
	switch cl := a.c.(type) {
	case *redis.Client:
		return cl, nil
	case *redis.ClusterClient:
		if len(c.Keys) == 0 {
			return nil, errors.New("rclient: WAIT after a keyless command on a cluster")
		}
		return cl.MasterForKey(ctx, c.Keys[0])
	}
	return nil, fmt.Errorf("rclient: go-redis client %T", a.c)
}

func (a *rueidisAdapter) CallWait(ctx context.Context, l *Library, fn string, keys, args []string, replicas int, timeout time.Duration) (any, int, error) {
	acked := 0
	do := func(ctx context.Context, c Command) (any, error) {
		cmd, err := a.build(c, false)
		if err != nil {
			return nil, err
		}
		w := waitCommand(replicas, timeout)
		wcmd, err := a.build(w, false)
		if err != nil {
			return nil, err
		}
		var v any
		// A dedicated client holds one connection (on a cluster, to the
		// master of cmd's slot; WAIT has none and follows it).
		derr := a.c.Dedicated(func(d rueidis.DedicatedClient) error {
			rs := d.DoMulti(ctx, cmd, wcmd)
			if v, err = rueidisResult(ctx, &c, rs[0]); err != nil {
				return nil
			}
			acked, err = ackedOf(rueidisResult(ctx, &w, rs[1]))
			return nil
		})
		return v, errors.Join(err, derr)
	}
	v, err := callFunction(ctx, do, a.LoadLibrary, l, fn, keys, args)
	return v, acked, err
}
