package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// prepareFaults prepares what a run's faults act through: the Redis node, the
// proxy the workers connect through (network faults), a store of its own
// on a crash client for each maintenance loop that may crash, and the
// worker processes' configuration. cleanup releases all of it.
func (pr *planRunner) prepareFaults(ctx context.Context, spec conditions.RunSpec, srv *pooledRedis, be registry.Backend, jopts jobstore.Options,
	moverLoop bool, hooks *engine.Hooks) (*engine.FaultSetup, func(), error) {
	cfg := spec.Config
	fp := &faultPrep{ctx: ctx, cfg: cfg, srv: srv, be: be, jopts: jopts, addr: srv.r.Addrs[0]}
	if pr.runAddr != "" {
		fp.addr = pr.runAddr // network.rtt: every connection of the run goes through its proxy
	}
	fs := &engine.FaultSetup{Events: faults.Plan(cfg.Faults, cfg.Seed, cfg.Warmup+cfg.Duration)}
	if cfg.Redis.Mode == "embedded" && len(srv.r.Nodes) == 1 {
		fs.Redis = srv.r.Nodes[0]
	}
	workerAddr := fp.addr
	var need struct{ proxy, rec, mov, master, partition, ballast, restart bool }
	for _, f := range cfg.Faults {
		need.restart = need.restart || f.Descriptor().RestartsRedis
		need.ballast = need.ballast || f.Descriptor().Ballast
		need.master = need.master || f.Descriptor().Needs.KillMaster
		need.partition = need.partition || f.Descriptor().Needs.Partition
		need.proxy = need.proxy || f.NeedsProxy()
		need.rec = need.rec || f.Descriptor().Needs.Recoverer
		need.mov = need.mov || f.Descriptor().Needs.Mover
	}
	if fs.Redis != nil && need.restart && strings.HasPrefix(cfg.Redis.Persistence, "rdb") {
		w, err := watchSnapshots(fs.Redis, srv.r.ClientOptions(), time.Now())
		if err != nil {
			return nil, fp.cleanup, err
		}
		fp.closers = append(fp.closers, w.close)
		fs.Redis, fs.Snapshot = w, w.Snapshot
	}
	if need.master {
		fs.KillMaster = masterKiller(srv, queueKey(jopts.Queue, cfg.Store.Shards), hooks.Cost)
	}
	if need.ballast {
		fs.Ballast = ballaster(srv, cfg.Redis.MaxMemory)
	}
	if need.partition {
		fs.Partition = partitioner(srv, queueKey(jopts.Queue, cfg.Store.Shards))
	}
	if need.proxy {
		p, wstore, err := fp.proxied()
		if err != nil {
			return nil, fp.cleanup, err
		}
		fs.Proxy, hooks.WStore, workerAddr = p, wstore, p.Addr()
	}
	var err error
	if need.rec {
		if fs.RecLoop, err = fp.crashLoop(false); err != nil {
			return nil, fp.cleanup, err
		}
	}
	if need.mov && moverLoop {
		if fs.MovLoop, err = fp.crashLoop(true); err != nil {
			return nil, fp.cleanup, err
		}
	}
	if cfg.Workers.Processes > 0 || cfg.Workers.Remote > 0 {
		var tlsFiles *rclient.TLSFiles
		if srv.r.TLS != nil {
			if srv.r.TLSFiles == (rclient.TLSFiles{}) {
				return nil, fp.cleanup, fmt.Errorf("workers.processes and workers.remote: this TLS Redis came with no TLS options to hand on to a worker process (a rediss:// URL's ca_file, cert_file, key_file)")
			}
			f := srv.r.TLSFiles
			tlsFiles = &f
		}
		hooks.Procs = &engine.ProcSetup{Config: cfg, Queue: jopts.Queue, Addr: workerAddr, Username: srv.r.Username, Password: srv.r.Password,
			TLS: tlsFiles, Cluster: srv.r.Cluster, Logf: pr.o.Logf}
	}
	if len(cfg.Faults) == 0 {
		fs = nil
	}
	return fs, fp.cleanup, nil
}

// faultPrep builds the clients and stores a run's faults act through, and
// keeps what to close.
type faultPrep struct {
	ctx   context.Context
	cfg   conditions.Config
	srv   *pooledRedis
	be    registry.Backend
	jopts jobstore.Options
	// addr is where the run's clients reach Redis (the server, or
	// network.rtt's proxy).
	addr    string
	closers []func()
}

func (fp *faultPrep) cleanup() {
	for i := len(fp.closers) - 1; i >= 0; i-- {
		fp.closers[i]()
	}
}

// build builds the run's store on c, wrapped for simulated time.
func (fp *faultPrep) build(c rclient.Client) (jobstore.Store, error) {
	st, err := newStore(fp.ctx, fp.be, c, fp.cfg, fp.jopts)
	if err != nil {
		return nil, err
	}
	fp.closers = append(fp.closers, func() { _ = st.Close() })
	return st, nil
}

// client connects the run's client library to addr.
func (fp *faultPrep) client(addr string) (rclient.Client, error) {
	o := fp.srv.r.ClientOptions()
	o.Addrs = []string{addr}
	c, err := rclient.New(fp.cfg.Client, o)
	if err != nil {
		return nil, err
	}
	fp.closers = append(fp.closers, func() { _ = c.Close() })
	return c, nil
}

// proxied starts the network-fault proxy and the workers' store behind it.
func (fp *faultPrep) proxied() (*faults.Proxy, jobstore.Store, error) {
	p, err := faults.NewProxy(fp.srv.r.Addrs[0])
	if err != nil {
		return nil, nil, err
	}
	fp.closers = append(fp.closers, p.Close)
	c, err := fp.client(p.Addr())
	if err != nil {
		return nil, nil, err
	}
	st, err := fp.build(c)
	return p, st, err
}

// crashLoop builds a maintenance loop's own store on a crash client: the
// recoverer's, or (mover) the mover's, which must be a jobstore.Mover.
func (fp *faultPrep) crashLoop(mover bool) (*engine.LoopCrash, error) {
	c, err := fp.client(fp.addr)
	if err != nil {
		return nil, err
	}
	cc := faults.NewCrashClient(c)
	st, err := fp.build(cc)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(jobstore.Mover); mover && !ok {
		return nil, fmt.Errorf("%s is not a mover", fp.cfg.Backend.Name)
	}
	return engine.NewLoopCrash(st, cc), nil
}
