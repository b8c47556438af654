package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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
		c := redis.NewClient(&redis.Options{Addr: o.Addrs[0], Username: o.Username, Password: o.Password, TLSConfig: o.TLS, DisableIndentity: true})
		value := make([]byte, ballastChunk)
		for i := range value {
			value[i] = 'b'
		}
		target := int64(fill * float64(maxmemory))
		var written int64
		var keys []string
		for n := 0; written < target; n++ {
			key := "aebench-ballast:" + strconv.Itoa(n)
			err := c.Set(ctx, key, value, ttl).Err()
			if err != nil {
				if isOOM(err) {
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
				if err := c.Unlink(context.Background(), keys[i:min(i+512, len(keys))]...).Err(); err != nil {
					return fmt.Errorf("ballast release: %w", err)
				}
			}
			return nil
		}
		return release, written, nil
	}
}

// isOOM says err is Redis refusing a write at maxmemory.
func isOOM(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && len(re.Error()) >= 3 && re.Error()[:3] == "OOM"
}
