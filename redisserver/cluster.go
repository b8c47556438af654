package redisserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// spawnCluster starts o.Masters cluster-enabled servers and forms them into
// one cluster with the slots split evenly, without redis-cli; with
// o.Replicas, that many more servers per master replicate it.
func spawnCluster(ctx context.Context, o Options, path string) (*Redis, error) {
	began := time.Now()
	ports, err := reservePorts(o.Masters*(1+o.Replicas), true)
	if err != nil {
		return nil, err
	}
	r := &Redis{Mode: ModeCluster, Cluster: true}
	fail := func(err error) (*Redis, error) {
		return nil, errors.Join(err, r.Close())
	}
	var all []*Node
	for _, p := range ports {
		n, err := newNode(o, path, p, true)
		if err != nil {
			return fail(err)
		}
		all = append(all, n)
		if len(r.Nodes) < o.Masters {
			r.Nodes = append(r.Nodes, n)
		} else {
			r.Replicas = append(r.Replicas, n)
		}
	}
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, n := range all {
		n.peers, n.masters = all, o.Masters
		wg.Go(func() { errs[i] = n.startFresh(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	for _, n := range r.Nodes {
		r.Addrs = append(r.Addrs, n.Addr())
	}
	r.Password = r.Nodes[0].password
	if len(r.Replicas) > 0 {
		if err := linkMasters(ctx, r.Nodes); err != nil {
			return fail(err)
		}
	}
	// Forming the cluster and syncing each replica takes longer the more
	// servers there are, and much longer on a loaded machine: the budget
	// grows with them.
	budget := o.StartTimeout + time.Duration(len(all))*perServerBudget
	fctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	if err := formCluster(fctx, r.Nodes); err != nil {
		return fail(fmt.Errorf("cluster of %d masters not formed within %v: %w", len(r.Nodes), budget, err))
	}
	if err := attachReplicas(fctx, r.Nodes, r.Replicas); err != nil {
		return fail(fmt.Errorf("%d replicas not attached within %v: %w", len(r.Replicas), budget, err))
	}
	o.Logf("redisserver: cluster of %d masters (%d replicas) ready in %v: %v", len(r.Nodes), len(r.Replicas),
		time.Since(began).Round(time.Millisecond), r.Addrs)
	return r, nil
}

// linkMasters puts a link proxy in front of each master and has the master
// announce the proxy's port to the cluster (before it meets the others),
// so its replicas replicate through the proxy and CutReplication can cut
// them off while clients, which map the proxy back to the master
// (ClientOptions' AddrMap), still reach it directly.
func linkMasters(ctx context.Context, masters []*Node) error {
	for _, n := range masters {
		p, err := newLinkProxy(n.Addr())
		if err != nil {
			return err
		}
		n.link = p
		c := newClient(n.Addr(), rclient.Auth{Password: n.password}, 0)
		err = c.ConfigSet(ctx, "cluster-announce-port", strconv.Itoa(p.Port())).Err()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("redisserver: announce %s at its link proxy %s: %w", n.Addr(), p.Addr(), err)
		}
	}
	return nil
}

// CutReplication cuts every connection between master n and its replicas
// (its link proxy drops them and refuses new ones) and returns what heals
// the cut. Clients still reach n. It fails for a node with no link: a
// cluster without replicas, or a replica.
func (r *Redis) CutReplication(n *Node) (heal func() error, err error) {
	if n.link == nil {
		return nil, fmt.Errorf("redisserver: %s has no replication link to cut (only the masters of a spawned cluster with replicas do)", n.Addr())
	}
	n.link.Cut()
	return func() error { n.link.Heal(); return nil }, nil
}

// perServerBudget is what each server of a spawned cluster adds to the
// time it may take to form (Options.StartTimeout is the base).
const perServerBudget = 3 * time.Second

// formCluster gives each fresh node a distinct config epoch and an even
// share of the slots, introduces them to the first node, and waits until all
// agree the cluster is ok.
func formCluster(ctx context.Context, nodes []*Node) error {
	clients := nodeClients(nodes)
	defer closeClients(clients)
	total := len(nodes)
	for i, c := range clients {
		addr := nodes[i].Addr()
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("redisserver: CLUSTER SET-CONFIG-EPOCH on %s: %w", addr, err)
		}
		lo, hi := i*clusterSlots/total, (i+1)*clusterSlots/total-1
		if err := c.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fmt.Errorf("redisserver: CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, addr, err)
		}
	}
	for _, n := range nodes[1:] {
		if err := clients[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.port)).Err(); err != nil {
			return fmt.Errorf("redisserver: CLUSTER MEET %s from %s: %w", n.Addr(), nodes[0].Addr(), err)
		}
	}
	return waitClusterOK(ctx, nodes, total)
}

// attachReplicas makes replica j replicate master j mod len(masters): it
// meets the cluster, then CLUSTER REPLICATE (refused until gossip has told
// it the master's id, so retried), and waits until every replica's link
// is up and every node reports the cluster ok.
func attachReplicas(ctx context.Context, masters, replicas []*Node) error {
	if len(replicas) == 0 {
		return nil
	}
	mc := nodeClients(masters)
	defer closeClients(mc)
	ids := make([]string, len(masters))
	for i, c := range mc {
		id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return fmt.Errorf("redisserver: CLUSTER MYID on %s: %w", masters[i].Addr(), err)
		}
		ids[i] = id
	}
	rc := nodeClients(replicas)
	defer closeClients(rc)
	for _, n := range replicas {
		if err := mc[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(n.port)).Err(); err != nil {
			return fmt.Errorf("redisserver: CLUSTER MEET %s: %w", n.Addr(), err)
		}
	}
	for j, c := range rc {
		if err := retry(ctx, func() error { return c.Do(ctx, "CLUSTER", "REPLICATE", ids[j%len(masters)]).Err() }); err != nil {
			return fmt.Errorf("redisserver: CLUSTER REPLICATE on %s: %w", replicas[j].Addr(), err)
		}
	}
	for j, c := range rc {
		err := retry(ctx, func() error {
			info, err := c.Info(ctx, "replication").Result()
			if err == nil && infoField(info, "master_link_status") != "up" {
				err = errors.New("master_link_status " + infoField(info, "master_link_status"))
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("redisserver: replica %s: %w", replicas[j].Addr(), err)
		}
	}
	// The replica's link is up before its master counts it: WAIT counts
	// only replicas the master holds online, so wait for the master's side
	// too (a WAIT right after start otherwise acked 0 on a loaded machine).
	for i, c := range mc {
		want := 0
		for j := range replicas {
			if j%len(masters) == i {
				want++
			}
		}
		err := retry(ctx, func() error {
			info, err := c.Info(ctx, "replication").Result()
			if err == nil && strings.Count(info, "state=online") < want {
				err = fmt.Errorf("%d of %d replicas online", strings.Count(info, "state=online"), want)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("redisserver: master %s: %w", masters[i].Addr(), err)
		}
	}
	return waitClusterOK(ctx, append(append([]*Node(nil), masters...), replicas...), len(masters))
}

// retry calls f every 20ms until it succeeds or ctx ends.
func retry(ctx context.Context, f func() error) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitClusterOK polls until every node reports cluster_state:ok and its
// CLUSTER SLOTS covers all slots with masters masters, or ctx ends.
func waitClusterOK(ctx context.Context, nodes []*Node, masters int) error {
	clients := nodeClients(nodes)
	defer closeClients(clients)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var notOK error
		for i, c := range clients {
			if err := clusterNodeOK(ctx, c, masters); err != nil {
				notOK = fmt.Errorf("node %s: %w", nodes[i].Addr(), err)
				break
			}
		}
		if notOK == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisserver: cluster not ok (%v): %w", ctx.Err(), notOK)
		case <-tick.C:
		}
	}
}

// clusterNodeOK checks one node's view of the cluster.
func clusterNodeOK(ctx context.Context, c *redis.Client, masters int) error {
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	if st := infoField(info, "cluster_state"); st != "ok" {
		return fmt.Errorf("cluster_state:%s", st)
	}
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return err
	}
	var covered [clusterSlots]bool
	n := 0
	owners := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) > 0 {
			owners[s.Nodes[0].Addr] = true
		}
		for i := max(s.Start, 0); i <= s.End && i < clusterSlots; i++ {
			if !covered[i] {
				covered[i] = true
				n++
			}
		}
	}
	if n != clusterSlots {
		return fmt.Errorf("CLUSTER SLOTS covers %d of %d slots", n, clusterSlots)
	}
	if len(owners) < masters {
		return fmt.Errorf("CLUSTER SLOTS shows %d of %d masters", len(owners), masters)
	}
	return nil
}

// clusterMasters lists the master addresses in CLUSTER SLOTS, in order of
// first appearance.
func clusterMasters(ctx context.Context, c *redis.Client) ([]string, error) {
	slots, err := c.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) == 0 || seen[s.Nodes[0].Addr] {
			continue
		}
		seen[s.Nodes[0].Addr] = true
		out = append(out, s.Nodes[0].Addr)
	}
	return out, nil
}

func nodeClients(nodes []*Node) []*redis.Client {
	cs := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newClient(n.Addr(), rclient.Auth{Password: n.password}, 0)
	}
	return cs
}

func closeClients(cs []*redis.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// MasterOf returns the spawned node that masters key's slot now (a
// replica once it has taken over), asking a running node of the cluster.
func (r *Redis) MasterOf(ctx context.Context, key string) (*Node, error) {
	all := append(append([]*Node(nil), r.Nodes...), r.Replicas...)
	for _, n := range all {
		if !n.Running() || n.Paused() {
			continue
		}
		c := newClient(n.Addr(), r.Auth(), 0)
		slot, err := c.ClusterKeySlot(ctx, key).Result()
		var slots []redis.ClusterSlot
		if err == nil {
			slots, err = c.ClusterSlots(ctx).Result()
		}
		_ = c.Close()
		if err != nil {
			return nil, fmt.Errorf("redisserver: master of %s: %w", key, err)
		}
		for _, s := range slots {
			if int64(s.Start) <= slot && slot <= int64(s.End) && len(s.Nodes) > 0 {
				for _, m := range all {
					if m.Addr() == s.Nodes[0].Addr || m.announced() == s.Nodes[0].Addr {
						return m, nil
					}
				}
			}
		}
		return nil, fmt.Errorf("redisserver: no spawned node masters slot %d of %s", slot, key)
	}
	return nil, fmt.Errorf("redisserver: master of %s: no node is running", key)
}
