package lab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/rediscost"
	"github.com/aebench/aebench/redisserver"
)

// Counting: a timed ratio on a shared two-core host moves 15-25% from
// run to run, and Redis's share of a job's cost moves with it. So each
// pair is also run once against a redis-server under callgrind, and the
// instructions Redis spends a job are counted on both sides, the same
// way: the window starts half a second after the ready list first
// shrinks (the drain has begun, after either side's load) and lasts
// countWindow; jobs are what left the ready list in it. The count is
// printed, not judged: it says whether the work each side asks of Redis
// is the same, which the timed verdict alone cannot.
const (
	countJobs   = 60000 // a drain of 3 s and more under callgrind, even on a fast machine
	countSettle = 500 * time.Millisecond
	countWindow = 1500 * time.Millisecond
	countPoll   = 20 * time.Millisecond
)

// countPair runs p's plain program and aebench's run of p.backend once
// each on a callgrind Redis and prints Redis's instructions a job for
// both. Without valgrind it prints why it did not.
func (e peerEnv) countPair(ctx context.Context, p peerPair, bin string) {
	line := func(format string, a ...any) {
		fmt.Fprintf(e.stdout, "%-7s  Redis instructions a job (callgrind, one run a side, %s of each drain from %s after it began; "+
			"serverCron and INFO left out; not judged): %s\n", "", countWindow, countSettle, fmt.Sprintf(format, a...))
	}
	if err := rediscost.CheckValgrind(); err != nil {
		line("skipped: %v", err)
		return
	}
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn, Callgrind: true})
	if err != nil {
		line("error: %v", err)
		return
	}
	defer r.Close()
	cg := rediscost.Callgrind{PID: r.Nodes[0].PID(), OutFile: r.Nodes[0].CallgrindOut()}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addrs[0], Password: r.Password})
	defer rdb.Close()
	args := fmt.Sprintf("-jobs %d %s", countJobs, p.args)
	plain, err := countSide(ctx, rdb, cg, p.ready, func() error {
		_, err := runPlain(ctx, bin, r.Addrs[0], r.Password, args)
		return err
	})
	if err != nil {
		line("error: %s: %v", filepath.Base(p.plain), err)
		return
	}
	ae, err := countSide(ctx, rdb, cg, p.ready, func() error {
		_, err := runAebench(ctx, e.self, e.root, filepath.Join(e.tmp, p.backend+"-count"), redisURL(r.Addrs[0], r.Password), p.backend, countJobs)
		return err
	})
	if err != nil {
		line("error: aebench: %v", err)
		return
	}
	line("plain %.1fk, aebench %.1fk: %.2fx", plain/1e3, ae/1e3, ae/plain)
}

// countSide runs run (one side, which loads and drains the queue whose
// ready list matches the pattern ready) and meters Redis over a window
// of its drain: instructions a job, without serverCron and INFO (the
// harness's meter reads INFO; the plain programs do not).
func countSide(ctx context.Context, rdb *redis.Client, cg rediscost.Callgrind, ready string, run func() error) (float64, error) {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return 0, fmt.Errorf("FLUSHALL: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- run() }()
	per, err := meterDrain(ctx, rdb, cg, ready, done)
	if err != nil {
		// Let the side finish (it stops by itself) before the next starts.
		<-done
		return 0, err
	}
	if err := <-done; err != nil {
		return 0, err
	}
	return per, nil
}

// meterDrain waits for the drain of the list matching ready to begin,
// then meters countWindow of it. done ends the wait early with the
// side's error (or with an error of its own if the side ended first).
func meterDrain(ctx context.Context, rdb *redis.Client, cg rediscost.Callgrind, ready string, done <-chan error) (float64, error) {
	var key string
	var top int64
	for {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("the run ended before its drain was metered")
			}
			return 0, err
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(countPoll):
		}
		if key == "" {
			keys, _ := rdb.Keys(ctx, ready).Result()
			if len(keys) != 1 {
				continue
			}
			key = keys[0]
		}
		n, err := rdb.LLen(ctx, key).Result()
		if err != nil {
			return 0, fmt.Errorf("LLEN %s: %w", key, err)
		}
		if n >= top {
			top = n
			continue
		}
		break // the list shrank: the drain has begun
	}
	time.Sleep(countSettle)
	if err := cg.Start(ctx); err != nil {
		return 0, err
	}
	n0, err0 := rdb.LLen(ctx, key).Result()
	time.Sleep(countWindow)
	n1, err1 := rdb.LLen(ctx, key).Result()
	prof, err := cg.Stop(ctx)
	if err = errors.Join(err, err0, err1); err != nil {
		return 0, err
	}
	jobs := n0 - n1
	if jobs <= 0 || n1 == 0 {
		return 0, fmt.Errorf("the window drained %d jobs and left %d waiting: nothing to divide by, or idle time in it", jobs, n1)
	}
	return float64(prof.Split("info").Work) / float64(jobs), nil
}
