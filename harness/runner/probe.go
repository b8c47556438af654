package runner

import (
	"context"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/probe"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/rediscost"
)

// pathTarget is a metered run's Redis, kept for the path probe.
type pathTarget struct {
	srv    *pooledRedis
	client rclient.Client
	cg     rediscost.Callgrind
}

// probePaths runs package probe on the metered run's Redis, flushed, with
// a store of the run's backend and options on a queue of its own: each
// path of a job in a window of its own (summary.json's "probe"). A probe
// that fails says why in its Error and leaves the run's figures alone.
func (pr *planRunner) probePaths(ctx context.Context, spec conditions.RunSpec, be registry.Backend) *summary.PathProbe {
	t := pr.paths
	if err := t.srv.flush(ctx); err != nil {
		return &summary.PathProbe{Error: "path probe: " + err.Error()}
	}
	counting := probe.NewCounting(t.client)
	cfg := spec.Config
	store, err := newStore(ctx, be, counting, cfg, runStoreOptions(cfg, "aeb-probe-"+spec.ID))
	if err != nil {
		return &summary.PathProbe{Error: "path probe: build store: " + err.Error()}
	}
	defer store.Close()
	return probe.Run(ctx, probe.Options{Store: store, Client: counting, Meter: &t.cg, Addrs: t.srv.r.Addrs, Auth: t.srv.r.Auth()})
}
