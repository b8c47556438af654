// Command list is the plain list queue `make peer-check` measures
// aebench's floor against: the same Redis commands as the floor
// (backends/floor) written straight on go-redis, with no aebench code in
// its loop. It loads -jobs jobs (HSET of the record, LPUSH of the id,
// pipelined by 100), then -workers goroutines each loop on BLMOVE ready
// -> processing, HGET of the payload (a worker needs it), then LREM
// processing from the tail (where the oldest claims are) + HSET of the
// outcome in one pipeline; after -warmup it takes jobs/s and this process's CPU per job
// over -window, and prints them as one JSON line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	addr := flag.String("addr", "", "Redis host:port (required; a loopback address)")
	password := flag.String("password", "", "Redis password")
	jobs := flag.Int("jobs", 100000, "jobs loaded before the drain")
	workers := flag.Int("workers", 16, "consumer goroutines")
	payload := flag.Int("payload", 64, "payload bytes")
	warmup := flag.Duration("warmup", time.Second, "drain time not measured")
	window := flag.Duration("window", 2*time.Second, "drain time measured")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "plain list: -addr is required (the Redis to use; aebench peer-check passes its own)")
		os.Exit(2)
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, Password: *password, PoolSize: *workers + 4})
	defer rdb.Close()
	const ready, processing = "plain:{q}:ready", "plain:{q}:processing"
	p := strings.Repeat("a", *payload)
	for i := 0; i < *jobs; i += 100 {
		pipe := rdb.Pipeline()
		ids := make([]any, 0, 100)
		for k := i; k < min(*jobs, i+100); k++ {
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
	time.Sleep(*warmup)
	n0, c0, t0 := done.Load(), cpu(), time.Now()
	time.Sleep(*window)
	n1, c1, t1 := done.Load(), cpu(), time.Now()
	n := float64(n1 - n0)
	out, _ := json.Marshal(map[string]float64{"jobs_per_s": n / t1.Sub(t0).Seconds(),
		"client_cpu_us_per_job": float64(c1-c0) / float64(time.Microsecond) / n, "jobs": n})
	fmt.Println(string(out))
}

// cpu is this process's user and system CPU so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
