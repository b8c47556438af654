// Command asynq is the plain asynq program `make peer-check` measures
// aebench's asynq peer against: asynq used as its README shows, with no
// aebench code anywhere in its loop. It enqueues -jobs tasks with 16
// goroutines, then a Server with -concurrency workers drains them with a
// handler that only counts; after -warmup it takes jobs/s and this
// process's CPU per job over -window, and prints them as one JSON line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
)

func main() {
	addr := flag.String("addr", "", "Redis host:port (required; a loopback address)")
	password := flag.String("password", "", "Redis password")
	jobs := flag.Int("jobs", 50000, "tasks enqueued before the drain")
	conc := flag.Int("concurrency", 16, "Server concurrency")
	payload := flag.Int("payload", 64, "payload bytes")
	warmup := flag.Duration("warmup", time.Second, "drain time not measured")
	window := flag.Duration("window", 2*time.Second, "drain time measured")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "plain asynq: -addr is required (the Redis to use; aebench peer-check passes its own)")
		os.Exit(2)
	}
	opt := asynq.RedisClientOpt{Addr: *addr, Password: *password}
	if err := fill(opt, *jobs, *payload); err != nil {
		fmt.Fprintln(os.Stderr, "plain asynq: enqueue:", err)
		os.Exit(1)
	}
	var done atomic.Int64
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: *conc, Queues: map[string]int{"plain": 1}, LogLevel: asynq.WarnLevel})
	if err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		done.Add(1)
		return nil
	})); err != nil {
		fmt.Fprintln(os.Stderr, "plain asynq: server:", err)
		os.Exit(1)
	}
	time.Sleep(*warmup)
	n0, c0, t0 := done.Load(), cpu(), time.Now()
	time.Sleep(*window)
	n1, c1, t1 := done.Load(), cpu(), time.Now()
	srv.Shutdown()
	n := float64(n1 - n0)
	out, _ := json.Marshal(map[string]float64{"jobs_per_s": n / t1.Sub(t0).Seconds(),
		"client_cpu_us_per_job": float64(c1-c0) / float64(time.Microsecond) / n, "jobs": n})
	fmt.Println(string(out))
}

// fill enqueues n tasks from 16 goroutines (asynq has no batch enqueue).
func fill(opt asynq.RedisClientOpt, n, size int) error {
	c := asynq.NewClient(opt)
	defer c.Close()
	p := make([]byte, size)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				if _, err := c.Enqueue(asynq.NewTask("plain", p), asynq.Queue("plain"), asynq.TaskID("t"+strconv.Itoa(i))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// cpu is this process's user and system CPU so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
