package runner

import (
	"context"
	"fmt"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/simtime"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// prepareFaults prepares what a run's faults act through: the Redis node, the
// proxy the workers connect through (network faults), a store of its own
// on a crash client for each maintenance loop that may crash, and the
// worker processes' configuration. cleanup releases all of it.
func (pr *planRunner) prepareFaults(ctx context.Context, spec scenario.RunSpec, srv *pooledRedis, be registry.Backend, jopts jobstore.Options,
	moverLoop bool, hooks *engine.Hooks) (*engine.FaultSetup, func(), error) {
	cfg := spec.Config
	var closers []func()
	cleanup := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fs := &engine.FaultSetup{Events: faults.Plan(cfg.Faults, cfg.Seed, cfg.Warmup+cfg.Duration)}
	if cfg.Redis.Mode == "embedded" && len(srv.r.Nodes) == 1 {
		fs.Redis = srv.r.Nodes[0]
	}
	workerAddr := srv.r.Addrs[0]
	var need struct{ proxy, rec, mov, master, partition bool }
	for _, f := range cfg.Faults {
		need.master = need.master || f.Kind == faults.MasterKill
		need.partition = need.partition || f.Kind == faults.NetPartition
		need.proxy = need.proxy || f.NeedsProxy()
		need.rec = need.rec || f.Kind == faults.RecovererCrash
		need.mov = need.mov || f.Kind == faults.MoverCrash
	}
	build := func(c rclient.Client) (jobstore.Store, error) {
		st, err := be.BuildShards(ctx, c, jopts, cfg.Backend.Options, cfg.Store.Shards)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { _ = st.Close() })
		return simtime.Wrap(st, jopts.Clock), nil
	}
	newClient := func(addr string) (rclient.Client, error) {
		o := srv.r.ClientOptions()
		o.Addrs = []string{addr}
		c, err := rclient.New(cfg.Client, o)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { _ = c.Close() })
		return c, nil
	}
	if need.master {
		fs.KillMaster = masterKiller(srv, queueKey(jopts.Queue, cfg.Store.Shards), hooks.Cost)
	}
	if need.partition {
		fs.Partition = partitioner(srv, queueKey(jopts.Queue, cfg.Store.Shards))
	}
	if need.proxy {
		p, err := faults.NewProxy(srv.r.Addrs[0])
		if err != nil {
			return nil, cleanup, err
		}
		closers = append(closers, p.Close)
		fs.Proxy = p
		workerAddr = p.Addr()
		c, err := newClient(p.Addr())
		if err != nil {
			return nil, cleanup, err
		}
		if hooks.WStore, err = build(c); err != nil {
			return nil, cleanup, err
		}
	}
	for _, l := range []struct {
		want bool
		dst  **engine.LoopCrash
	}{{need.rec, &fs.RecLoop}, {need.mov && moverLoop, &fs.MovLoop}} {
		if !l.want {
			continue
		}
		c, err := newClient(srv.r.Addrs[0])
		if err != nil {
			return nil, cleanup, err
		}
		cc := faults.NewCrashClient(c)
		st, err := build(cc)
		if err != nil {
			return nil, cleanup, err
		}
		if _, ok := st.(jobstore.Mover); l.dst == &fs.MovLoop && !ok {
			return nil, cleanup, fmt.Errorf("%s is not a mover", cfg.Backend.Name)
		}
		*l.dst = engine.NewLoopCrash(st, cc)
	}
	if cfg.Workers.Processes > 0 || cfg.Workers.Remote > 0 {
		hooks.Procs = &engine.ProcSetup{Config: cfg, Queue: jopts.Queue, Addr: workerAddr, Password: srv.r.Password, Cluster: srv.r.Cluster, Logf: pr.o.Logf}
	}
	if len(cfg.Faults) == 0 {
		fs = nil
	}
	return fs, cleanup, nil
}
