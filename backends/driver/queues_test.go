package driver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/driver/drivertest"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// perQueue is how many jobs wait in each queue before the worker starts.
const perQueue = 100

var testQueues = []jobstore.QueueWeight{{Name: "high", Weight: 6}, {Name: "mid", Weight: 3}, {Name: "low", Weight: 1}}

// TestDriverQueues: each driver maps store.queues onto its system's own
// queues or priorities and serves them under each policy its hello
// declares. Jobs wait in three queues, enqueued interleaved (low, mid,
// high, low, ...), so a driver that ignored a job's queue would serve
// them in that order; then one worker running one job at a time drains
// them, and the order of its completions shows the policy:
//   - strict: every high job, then every mid, then every low;
//   - weighted (6:3:1): low jobs served while high still waits, fewer
//     than high's (Sidekiq's shuffle by weight serves low first one fetch
//     in ten: no low job in the first 100 has odds 0.9^100, 3e-5);
//   - round_robin: high, mid, low, high, ... while every queue has jobs.
//
// A policy the hello does not declare is refused as ErrInvalid.
func TestDriverQueues(t *testing.T) {
	drivertest.Each(t, func(t *testing.T, spec driver.Spec) {
		r := redistest.Start(t, redisserver.Options{})
		c, err := rclient.New(rclient.GoRedis, r.ClientOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		declared := driver.DeclaredBy[spec.Name].Queues
		for _, policy := range []string{"strict", "weighted", "round_robin"} {
			order, err := drainQueues(c, r.Addrs[0], spec, policy)
			if !slices.Contains(declared, policy) {
				if !errors.Is(err, jobstore.ErrInvalid) {
					t.Errorf("%s: an undeclared policy gave %v; want ErrInvalid", policy, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", policy, err)
			}
			if why := checkOrder(policy, order); why != "" {
				t.Errorf("%s: %s; completions by queue: %s", policy, why, strings.Join(order, " "))
			}
		}
	})
}

// checkOrder says how order (each completion's queue, in completion
// order) breaks policy, or "".
func checkOrder(policy string, order []string) string {
	if len(order) != perQueue*len(testQueues) {
		return fmt.Sprintf("%d completions of %d jobs", len(order), perQueue*len(testQueues))
	}
	rank := func(q string) int {
		return slices.IndexFunc(testQueues, func(w jobstore.QueueWeight) bool { return w.Name == q })
	}
	switch policy {
	case "strict":
		for i := 1; i < len(order); i++ {
			if rank(order[i]) < rank(order[i-1]) {
				return fmt.Sprintf("completion %d is %s after %s", i, order[i], order[i-1])
			}
		}
	case "weighted":
		first := order[:perQueue]
		high, low := countOf(first, "high"), countOf(first, "low")
		if low == 0 || high <= low {
			return fmt.Sprintf("the first %d completions hold %d high and %d low jobs: want low served, less than high", perQueue, high, low)
		}
	case "round_robin":
		for i := range perQueue {
			if want := testQueues[i%len(testQueues)].Name; order[i] != want {
				return fmt.Sprintf("completion %d is %s, not %s", i, order[i], want)
			}
		}
	}
	return ""
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// drainQueues enqueues perQueue jobs in each queue through the driver's
// client, then runs one worker process at concurrency 1 until every job
// completed, and returns the completions' queues in order of their times.
func drainQueues(c rclient.Client, addr string, spec driver.Spec, policy string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := jobstore.Options{Queue: "aeq-" + spec.Name + "-" + policy, Queues: testQueues, QueuePolicy: policy}
	s, err := driver.New(ctx, c, o, spec, false, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	queueOf := map[string]string{}
	var jobs []jobstore.NewJob
	for i := range perQueue {
		for k := len(testQueues) - 1; k >= 0; k-- {
			id := fmt.Sprintf("%s-%d", testQueues[k].Name, i)
			queueOf[id] = testQueues[k].Name
			jobs = append(jobs, jobstore.NewJob{ID: id, Queue: testQueues[k].Name})
		}
	}
	for b := range slices.Chunk(jobs, 50) {
		if err := s.Enqueue(ctx, b...); err != nil {
			return nil, err
		}
	}
	times, err := runWorker(ctx, s, addr, len(jobs))
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(times))
	for id := range times {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return int(times[a] - times[b]) })
	order := make([]string, len(ids))
	for i, id := range ids {
		order[i] = queueOf[id]
	}
	return order, nil
}

// runWorker runs the store's worker role at concurrency 1 until n jobs
// completed, and returns each job's completion time.
func runWorker(ctx context.Context, s *driver.Store, addr string, n int) (map[string]int64, error) {
	cmd, err := s.WorkerCommand(jobstore.WorkerSpec{Concurrency: 1, Addr: addr, Lease: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// Its own process group: a driver's children (RQ's forked workers)
	// hold the pipes, so a kill takes the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	defer func() {
		_ = stdin.Close() // the clean stop; killed if it takes longer than 10s
		t := time.AfterFunc(10*time.Second, kill)
		_ = cmd.Wait()
		t.Stop()
	}()
	stop := context.AfterFunc(ctx, kill)
	defer stop()
	times := map[string]int64{}
	sc := bufio.NewScanner(out)
	for len(times) < n && sc.Scan() {
		var ev struct {
			E, ID string
			T     int64
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.E == "completed" {
			times[ev.ID] = ev.T
		}
	}
	if len(times) < n {
		return times, fmt.Errorf("%d of %d jobs completed (%v); stderr: %s", len(times), n, ctx.Err(), stderr.String())
	}
	return times, nil
}
