// Command store runs aebench's floor Store (backends/floor over rclient's
// go-redis adapter) in bench/plain/list's loop, with none of the harness:
// no ledger, no histograms, no producers. It is not a plain program (the
// store is aebench's code); `make peer-check` runs it beside
// bench/plain/list and aebench's floor run to split the gap between them
// into the store's part (this program against the list loop) and the
// harness's measurement (aebench's run against this program). It loads
// -jobs jobs through Store.Enqueue (batches of 100), then -workers
// goroutines each loop on Claim (one job, blocking up to 1 s) and
// Complete; bench/plain/window takes jobs/s and CPU per job after the
// warm-up.
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

	"github.com/aebench/aebench/backends/floor"
	"github.com/aebench/aebench/bench/plain/window"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

func main() {
	workers := flag.Int("workers", 16, "consumer goroutines")
	f := window.Parse("store", 100000)
	ctx := context.Background()
	c, err := rclient.New(rclient.GoRedis, rclient.Options{Addrs: []string{f.Addr}, Password: f.Password, PoolSize: *workers + 4})
	if err != nil {
		fail("connect", err)
	}
	defer c.Close()
	s, err := floor.New(ctx, c, jobstore.Options{Queue: "plain-store"})
	if err != nil {
		fail("floor", err)
	}
	p := []byte(strings.Repeat("a", f.Payload))
	batch := make([]jobstore.NewJob, 0, 100)
	for i := 0; i < f.Jobs; i += 100 {
		batch = batch[:0]
		for k := i; k < min(f.Jobs, i+100); k++ {
			batch = append(batch, jobstore.NewJob{ID: "j" + strconv.Itoa(k), Payload: p})
		}
		if err := s.Enqueue(ctx, batch...); err != nil {
			fail("load", err)
		}
	}
	var done atomic.Int64
	for w := range *workers {
		req := jobstore.ClaimRequest{WorkerID: "w" + strconv.Itoa(w), Max: 1, Lease: 30 * time.Second, Wait: time.Second}
		go func() {
			for {
				got, err := s.Claim(ctx, req)
				if err != nil || len(got) == 0 {
					continue // nothing waiting
				}
				if err := s.Complete(ctx, got[0].Lease, nil); err == nil {
					done.Add(1)
				}
			}
		}()
	}
	window.Measure(f, done.Load)
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "plain store: %s: %v\n", what, err)
	os.Exit(1)
}
