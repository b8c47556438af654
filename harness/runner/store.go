package runner

import (
	"context"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/simtime"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
)

// connect is a run's Redis side: the server (flushed when aebench owns it),
// a client of the scenario's library and the cost meter; none for the
// in-process calibration store. It states the conditions in rs.
func (pr *planRunner) connect(ctx context.Context, be registry.Backend, rs *summary.RunSummary) (rclient.Client, engine.CostMeter, func(), error) {
	cfg := rs.Config
	pr.runAddr = ""
	none := func() {}
	if be.Kind == registry.KindCalibration {
		rs.Client = "none (in process)"
		rs.Conditions = cfg.Conditions("") + ", no Redis (calibration)"
		return nil, nil, none, nil
	}
	srv, err := pr.pool.fresh(ctx, cfg.Redis)
	if err != nil {
		return nil, nil, none, err
	}
	pr.sum.Environment.AddRedis(srv.info)
	pr.sum.Environment.AddClient(cfg.Client)
	info := srv.info
	rs.Redis = &info
	rs.Conditions = cfg.Conditions(info.Version)
	if info.Owned {
		if err := srv.flush(ctx); err != nil {
			return nil, nil, none, err
		}
	}
	opts, closeProxy, err := pr.rttOptions(srv, cfg.Network.RTT)
	if err != nil {
		return nil, nil, none, err
	}
	client, err := rclient.New(cfg.Client, opts)
	if err != nil {
		closeProxy()
		return nil, nil, none, err
	}
	var cg *rediscost.Callgrind
	pr.paths = nil
	if cfg.Redis.Metered() && len(srv.r.Nodes) == 1 {
		cg = &rediscost.Callgrind{PID: srv.r.Nodes[0].PID(), OutFile: srv.r.Nodes[0].CallgrindOut()}
		pr.paths = &pathTarget{srv: srv, client: client, cg: *cg}
	}
	// The cost meter always reaches Redis directly: its INFO is no job's
	// round trip.
	return client, newRedisCost(srv.r.Addrs, srv.r.Auth(), info.Owned, cfg.Store.Retention, cg), closeProxy, nil
}

// rttOptions are the client options of a run: srv's, or with network.rtt
// the address of a proxy that delays each direction by half of rtt, which
// the run's every connection then goes through (pr.runAddr).
func (pr *planRunner) rttOptions(srv *pooledRedis, rtt time.Duration) (rclient.Options, func(), error) {
	opts := srv.r.ClientOptions()
	if rtt <= 0 {
		return opts, func() {}, nil
	}
	p, err := faults.NewProxy(srv.r.Addrs[0])
	if err != nil {
		return opts, func() {}, err
	}
	if err := p.SetRTT(rtt); err != nil {
		p.Close()
		return opts, func() {}, err
	}
	opts.Addrs = []string{p.Addr()}
	pr.runAddr = p.Addr()
	return opts, p.Close, nil
}

// runStoreOptions are the store options of a run on queue: the one place
// time.speed enters, as the stores' clock (a scaled clock under simulated
// time: the stores decide on simulated time, the engine runs the scenario
// scaled to the wall clock and sees them through simtime.Wrap).
func runStoreOptions(cfg conditions.Config, queue string) jobstore.Options {
	o := cfg.StoreOptions(queue)
	if cfg.Simulated() {
		o.Clock = clock.NewScaled(time.Now(), cfg.Speed())
	}
	return o
}

// newStore is the one recipe of a run's store: the backend built (sharded
// when store.shards asks), wrapped for simulated time. The run's store,
// the maintenance loops' own under faults, the option check before the
// first run and a worker process's all come from it.
func newStore(ctx context.Context, be registry.Backend, c rclient.Client, cfg conditions.Config, o jobstore.Options) (jobstore.Store, error) {
	var qs []jobstore.QueueWeight
	for _, q := range cfg.Store.Queues {
		qs = append(qs, jobstore.QueueWeight{Name: q.Name, Weight: q.Weight})
	}
	st, err := be.BuildQueues(ctx, c, o, cfg.Backend.Options, cfg.Store.Shards, qs, cfg.Store.QueuePolicy)
	if err != nil {
		return nil, err
	}
	return simtime.Wrap(st, o.Clock), nil
}
