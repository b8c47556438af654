package conformance_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/aebench/aebench/backends/queues"
	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/conformance"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// jobStores are the strategies under test: every job store of the one
// backend registry, with its default options. (The reference floor, the
// asynq peer and the null calibration store are not job stores; asynq runs
// the suite in its own package, gated by what it declares.)
func jobStores() []conformance.Backend {
	var out []conformance.Backend
	for _, b := range registry.Builtin().All() {
		if b.Kind != registry.KindJobStore {
			continue
		}
		out = append(out, conformance.Backend{Name: b.Name,
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
				return b.Build(ctx, c, o, nil)
			}})
	}
	return out
}

var clients = []string{"go-redis", "rueidis"}

// One standalone server and one 3-master cluster serve the whole test binary.
var (
	srvOnce         sync.Once
	single, cluster *redisserver.Redis
	srvErr          error
)

func targets(t *testing.T) []conformance.Target {
	t.Helper()
	srvOnce.Do(func() {
		// Background: the servers must outlive this call.
		ctx := context.Background()
		if single, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn}); srvErr != nil {
			srvErr = fmt.Errorf("standalone: %w", srvErr)
			return
		}
		if cluster, srvErr = redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeCluster}); srvErr != nil {
			srvErr = fmt.Errorf("cluster: %w", srvErr)
		}
	})
	if srvErr != nil {
		t.Fatalf("starting Redis: %v", srvErr)
	}
	return []conformance.Target{{Name: "single", Redis: single}, {Name: "cluster", Redis: cluster}}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range []*redisserver.Redis{single, cluster} {
		if r != nil {
			r.Close()
		}
	}
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	conformance.Run(t, jobStores(), targets(t), clients)
}

// TestRunStore runs the suite the way a user with a store of their own does:
// one call with the zero Config, which spawns a private redis-server. The
// store keeps almost none of the contract (see listStore), so this also
// checks that every case it cannot pass is gated by a capability.
func TestRunStore(t *testing.T) {
	conformance.RunStore(t, "liststore", conformance.Adapt(newListStore), conformance.Config{})
}

// TestConformanceSharded runs the suite on a sharded store of every job
// store (3 shards, package backends/shard) on the 3-master cluster, where
// its shards' hash tags fall on distinct masters. Cases that need a Claim
// to see the whole queue are gated by jobstore.CapQueueOrder, which a
// sharded store does not declare.
func TestConformanceSharded(t *testing.T) {
	var sharded []conformance.Backend
	for _, b := range jobStores() {
		be, err := registry.Builtin().Lookup(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		sharded = append(sharded, conformance.Backend{Name: b.Name + "-sharded3",
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
				return be.BuildShards(ctx, c, o, nil, 3)
			}})
	}
	var onCluster []conformance.Target
	for _, tg := range targets(t) {
		if tg.Name == "cluster" {
			onCluster = append(onCluster, tg)
		}
	}
	conformance.Run(t, sharded, onCluster, clients[:1])
}

// TestConformanceQueues runs the suite on every job store split into two
// queues (package backends/queues, "high:3 low:1") under the weighted
// policy, and on zset under strict and round_robin too, on the standalone
// target: the queue cases (QueueRouting, QueuePolicy) run there, and every
// other case proves the split keeps the contract.
func TestConformanceQueues(t *testing.T) {
	qs := []jobstore.QueueWeight{{Name: "high", Weight: 3}, {Name: "low", Weight: 1}}
	var stores []conformance.Backend
	for _, b := range jobStores() {
		be, err := registry.Builtin().Lookup(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, policy := range queues.Policies() {
			if policy != queues.Weighted && b.Name != "zset" {
				continue
			}
			stores = append(stores, conformance.Backend{Name: b.Name + "-queues-" + policy,
				New: func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
					return be.BuildQueues(ctx, c, o, nil, 1, qs, policy)
				}})
		}
	}
	var single []conformance.Target
	for _, tg := range targets(t) {
		if tg.Name == "single" {
			single = append(single, tg)
		}
	}
	conformance.Run(t, stores, single, clients[:1])
}
