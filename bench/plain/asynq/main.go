// Command asynq is the plain asynq program `make peer-check` measures
// aebench's asynq peer against: asynq used as its README shows, with no
// aebench code anywhere in its loop. It enqueues -jobs tasks with 16
// goroutines, then a Server with -concurrency workers drains them with a
// handler that only counts; bench/plain/window takes jobs/s and CPU per
// job after the warm-up. peer-check judges aebench's asynq-native (peer_mode
// native) against it on asynq's defaults, and runs it once more, not
// judged, with -retention 24h -header, the task options aebench's asynq
// enqueues with in contract mode (finished records kept, 24h by default,
// and a job's CreatedAt in a header).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aebench/aebench/bench/plain/window"
)

func main() {
	conc := flag.Int("concurrency", 16, "Server concurrency")
	retention := flag.Duration("retention", 0, "asynq.Retention of each task (0: asynq deletes a task when it completes)")
	header := flag.Bool("header", false, "give each task one header (NewTaskWithHeaders)")
	f := window.Parse("asynq", 50000)
	opt := asynq.RedisClientOpt{Addr: f.Addr, Password: f.Password}
	if err := fill(opt, f.Jobs, f.Payload, *retention, *header); err != nil {
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
	window.Measure(f, done.Load)
	srv.Shutdown()
}

// fill enqueues n tasks from 16 goroutines (asynq has no batch enqueue).
func fill(opt asynq.RedisClientOpt, n, size int, retention time.Duration, header bool) error {
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
				t := asynq.NewTask("plain", p)
				if header {
					t = asynq.NewTaskWithHeaders("plain", p, map[string]string{"created": strconv.FormatInt(time.Now().UnixMilli(), 10)})
				}
				opts := []asynq.Option{asynq.Queue("plain"), asynq.TaskID("t" + strconv.Itoa(i))}
				if retention > 0 {
					opts = append(opts, asynq.Retention(retention))
				}
				if _, err := c.Enqueue(t, opts...); err != nil {
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
