package zset_test

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

//go:embed testdata/seed002_verbatim.lua
var seed002Verbatim string

// TestSeed002ScriptOnCluster runs seed 002's own recovery script (its key
// names, no hash tag; see testdata/seed002_verbatim.lua) on a spawned
// 3-master cluster with stuck jobs on every master, calling it once on
// each master as a keyless EVAL may land on any. What the seed README
// calls "not safe on Redis Cluster", measured: the master that owns
// 'ae:jobs:queue' recovers its own jobs only; every other master refuses
// the script's write to the queue, after the script has already marked a
// job Scheduled (a script's writes are not rolled back), so that job is
// neither in progress nor queued: lost. The seed variant (variant=seed002)
// keeps its keys under the queue's tag; claims' flaw-seed002-cluster
// measures its late recovery.
func TestSeed002ScriptOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := redistest.Start(t, redisserver.Options{Mode: redisserver.ModeCluster})
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.ClientOptions().Addrs, DisableIdentity: true})
	defer func() { _ = cc.Close() }()
	const jobs = 60
	for i := range jobs {
		if err := cc.HSet(ctx, fmt.Sprintf("ae:job:%d", i), "Status", "300", "StartedAtUnix", "1", "RetryCount", "0", "MaxRetries", "3").Err(); err != nil {
			t.Fatal(err)
		}
	}
	var recovered int64
	var refused []string
	for _, n := range r.Nodes {
		nc := redis.NewClient(&redis.Options{Addr: n.Addr(), DisableIdentity: true})
		v, err := nc.Eval(ctx, seed002Verbatim, nil, 100, 3, 5, 200).Int64()
		_ = nc.Close()
		switch {
		case err == nil:
			recovered += v
		case strings.Contains(err.Error(), "non local key"):
			refused = append(refused, n.Addr())
		default:
			t.Fatalf("EVAL on %s: %v", n.Addr(), err)
		}
	}
	queued, err := cc.ZCard(ctx, "ae:jobs:queue").Result()
	if err != nil {
		t.Fatal(err)
	}
	var stranded int
	for i := range jobs {
		id := fmt.Sprint(i)
		st, err := cc.HGet(ctx, "ae:job:"+id, "Status").Result()
		if err != nil {
			t.Fatal(err)
		}
		_, zerr := cc.ZScore(ctx, "ae:jobs:queue", id).Result()
		if st == "200" && zerr == redis.Nil {
			stranded++
		}
	}
	t.Logf("%d stuck jobs on 3 masters: recovered %d (queued %d), refused on %d masters %v, %d marked Scheduled but in no queue",
		jobs, recovered, queued, len(refused), refused, stranded)
	if len(refused) != 2 || recovered == 0 || recovered >= jobs || queued != recovered {
		t.Errorf("want the script refused on the 2 masters that do not own ae:jobs:queue and the owner's jobs recovered")
	}
	if stranded != len(refused) {
		t.Errorf("stranded %d, want one job per refusing master (the script stops at its first write to the queue)", stranded)
	}
}

// TestSeed002RecoverOnCluster: the seed variant's recovery (variant
// seed002), like the seed's script, declares no keys (seed 002 lines
// 315-322: ScriptEvaluateAsync with values only), so on a cluster each call
// runs on a master the client picks at random and SCANs that master's keys
// only: a call that lands on a master not owning the queue's slot finds
// nothing, though a job's lease has expired. Thirty calls with a job due
// each, on a 3-master cluster: some must find nothing (all thirty reach
// the owner with odds (1/3)^30) and some must find their jobs.
func TestSeed002RecoverOnCluster(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t, redisserver.Options{Mode: redisserver.ModeCluster})
	c, err := rclient.New(rclient.GoRedis, r.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	s, err := zset.Build(ctx, c, jobstore.Options{Queue: "s2-cluster", Clock: clk, PollInterval: time.Millisecond},
		map[string]string{base.OptionVariant: zset.VariantSeed002})
	if err != nil {
		t.Fatal(err)
	}
	misses, hits := 0, 0
	for i := range 30 {
		if err := s.Enqueue(ctx, jobstore.NewJob{ID: fmt.Sprint("c", i), MaxRetries: 5}); err != nil {
			t.Fatal(err)
		}
		if cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: 1, Lease: time.Second}); err != nil || len(cl) != 1 {
			t.Fatalf("claim %d: %d jobs, %v", i, len(cl), err)
		}
		clk.Advance(time.Minute)
		res, err := s.Recover(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Requeued) == 0 {
			misses++
		} else {
			hits++
		}
	}
	if misses == 0 || hits == 0 {
		t.Fatalf("%d calls found their due jobs, %d found nothing: want both (a keyless call lands on any of 3 masters)", hits, misses)
	}
}
