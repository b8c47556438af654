// Command list is the plain list queue `make peer-check` measures
// aebench's floor against: the same Redis commands as the floor
// (backends/floor) written straight on go-redis, with no aebench code in
// its loop. It loads -jobs jobs (HSET of the record, LPUSH of the id,
// pipelined by 100), then -workers goroutines each loop on BLMOVE ready
// -> processing, HGET of the payload (a worker needs it), then LREM
// processing from the tail (where the oldest claims are) + HSET of the
// outcome in one pipeline; bench/plain/window takes jobs/s and CPU per job
// after the warm-up.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/bench/plain/window"
)

func main() {
	workers := flag.Int("workers", 16, "consumer goroutines")
	f := window.Parse("list", 100000)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: f.Addr, Password: f.Password, PoolSize: *workers + 4})
	defer rdb.Close()
	const ready, processing = "plain:{q}:ready", "plain:{q}:processing"
	p := strings.Repeat("a", f.Payload)
	for i := 0; i < f.Jobs; i += 100 {
		pipe := rdb.Pipeline()
		ids := make([]any, 0, 100)
		for k := i; k < min(f.Jobs, i+100); k++ {
			id := "j" + strconv.Itoa(k)
			pipe.HSet(ctx, "plain:{q}:job:"+id, "id", id, "p", p, "s", "queued")
			ids = append(ids, id)
		}
		pipe.LPush(ctx, ready, ids...)
		if _, err := pipe.Exec(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "plain list: load:", err)
			os.Exit(1)
		}
	}
	var done atomic.Int64
	for range *workers {
		go func() {
			for {
				id, err := rdb.BLMove(ctx, ready, processing, "RIGHT", "LEFT", time.Second).Result()
				if err != nil {
					continue // redis.Nil: nothing waiting
				}
				if _, err := rdb.HGet(ctx, "plain:{q}:job:"+id, "p").Result(); err != nil {
					continue
				}
				pipe := rdb.Pipeline()
				pipe.LRem(ctx, processing, -1, id)
				pipe.HSet(ctx, "plain:{q}:job:"+id, "s", "completed")
				if _, err := pipe.Exec(ctx); err == nil {
					done.Add(1)
				}
			}
		}()
	}
	window.Measure(f, done.Load)
}
