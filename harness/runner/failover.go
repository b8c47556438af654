package runner

import (
	"context"
	"fmt"

	"github.com/aebench/aebench/backends/shard"
	"github.com/aebench/aebench/harness/engine"
)

// masterKiller is the master_kill hook: it kills for good the spawned
// master that holds key's slot, marks the cluster broken (the next run
// that asks for one gets a fresh cluster) and leaves the dead node out of
// the cost snapshots. The replica the cluster promotes is not in them
// either: a failover run's Redis cost per job counts the surviving masters.
func masterKiller(srv *pooledRedis, key string, cost engine.CostMeter) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		n, err := srv.r.MasterOf(ctx, key)
		if err != nil {
			return "", err
		}
		srv.broken.Store(true)
		if err := n.Kill(); err != nil {
			return "", fmt.Errorf("kill master %s: %w", n.Addr(), err)
		}
		if rc, ok := cost.(*redisCost); ok {
			rc.forget(n.Addr())
		}
		return n.Addr(), nil
	}
}

// partitioner is the net_partition hook: it cuts the replication links
// of the spawned master that holds key's slot and returns what heals them.
func partitioner(srv *pooledRedis, key string) func(ctx context.Context) (string, func() error, error) {
	return func(ctx context.Context) (string, func() error, error) {
		n, err := srv.r.MasterOf(ctx, key)
		if err != nil {
			return "", nil, err
		}
		heal, err := srv.r.CutReplication(n)
		if err != nil {
			return "", nil, err
		}
		srv.broken.Store(true) // its replicas are behind: the next run gets a fresh cluster
		return n.Addr(), heal, nil
	}
}

// queueKey is a key in the queue's slot: its first shard's when sharded.
func queueKey(queue string, shards int) string {
	if shards > 1 {
		queue = shard.QueueName(queue, 0, shards)
	}
	return "{" + queue + "}"
}
