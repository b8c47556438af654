package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/rclient"
)

// ballastChunk is one ballast key's value size: large enough that the
// keys' own overhead is small, small enough to land near the target.
const ballastChunk = 64 << 10

// ballaster is the memory_pressure fault's hook on srv: a connection of
// its own writes fill x maxmemory bytes of ballast (keys outside every
// queue's hash tag, with ttl or none), stopping at the first refusal (an
// OOM under noeviction: the pressure holds at the limit). Its release
// deletes them.
func ballaster(srv *pooledRedis, maxmemory int64) func(ctx context.Context, fill float64, ttl time.Duration) (func() error, int64, error) {
	return func(ctx context.Context, fill float64, ttl time.Duration) (func() error, int64, error) {
		o := srv.r.ClientOptions()
		o.Addrs, o.Cluster = o.Addrs[:1], false // one node: the spawned standalone server
		c, err := rclient.New(rclient.GoRedis, o)
		if err != nil {
			return nil, 0, fmt.Errorf("ballast: %w", err)
		}
		value := strings.Repeat("b", ballastChunk)
		target := int64(fill * float64(maxmemory))
		var written int64
		var keys []string
		for n := 0; written < target; n++ {
			key := "aebench-ballast:" + strconv.Itoa(n)
			set := rclient.Cmd("SET", key, value)
			if ttl > 0 {
				set.Args = append(set.Args, "PX", strconv.FormatInt(ttl.Milliseconds(), 10))
			}
			if _, err := c.Do(ctx, set); err != nil {
				if rclient.IsOOM(err) {
					break // the limit holds: the pressure stays at it
				}
				_ = c.Close()
				return nil, written, fmt.Errorf("ballast: %w", err)
			}
			keys = append(keys, key)
			written += ballastChunk
		}
		release := func() error {
			defer c.Close()
			// Evicted ballast is gone already: UNLINK skips it.
			for i := 0; i < len(keys); i += 512 {
				unlink := rclient.Command{Head: []string{"UNLINK"}, Keys: keys[i:min(i+512, len(keys))]}
				if _, err := c.Do(context.Background(), unlink); err != nil {
					return fmt.Errorf("ballast release: %w", err)
				}
			}
			return nil
		}
		return release, written, nil
	}
}
