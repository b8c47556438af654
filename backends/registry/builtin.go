package registry

import (
	"context"

	"github.com/aebench/aebench/backends/asynq"
	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/dual"
	"github.com/aebench/aebench/backends/floor"
	"github.com/aebench/aebench/backends/null"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/backends/stream"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Builtin returns a new registry of the backends of this module: the job
// stores zset, bucket, stream and dual, the reference floor, the peer asynq,
// and the null calibration store.
func Builtin() *Registry {
	// The table has unique names and a New each (a test checks it
	// through New), so it needs no checking here.
	return &Registry{backends: builtins()}
}

func builtins() []Backend {
	return append(strategies(), others()...)
}

// strategies are the four job-store strategies.
func strategies() []Backend {
	return []Backend{
		FromSpec(zset.Spec()),
		FromSpec(bucket.Spec()),
		FromSpec(stream.Spec()),
		FromSpec(dual.Spec()),
	}
}

// others are the reference floor, the peers and the calibration store.
func others() []Backend {
	return []Backend{
		FromSpec(floor.Spec()),
		FromSpec(asynq.Spec()),
		driverPeer(driver.BullMQ), driverPeer(driver.Sidekiq), driverPeer(driver.RQ), driverPeer(driver.Celery),
		{Name: null.Name, Kind: KindCalibration,
			Doc:    "calibration, not a job store: an in-process queue with blocking claim, used to measure the harness's own overhead",
			Limits: "in process memory: nothing survives the process, no Redis, no client",
			Caps: spec.Caps(jobstore.CapBlockingClaim, jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO,
				jobstore.CapExactStats, jobstore.CapFencing, jobstore.CapLeaseRecovery, jobstore.CapRetries, jobstore.CapDelayedJobs,
				jobstore.CapCancel, jobstore.CapUniqueIDs, jobstore.CapAtomicBulk, jobstore.CapStoreClock),
			New: func(_ context.Context, _ rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
				return null.New(o)
			}},
	}
}

// PeerModeOf is a peer's peer_mode from its options: contract unless
// they say native (spec.OptionPeerMode).
func PeerModeOf(options map[string]string) string {
	if options[spec.OptionPeerMode] == spec.PeerNative {
		return spec.PeerNative
	}
	return spec.PeerContract
}

// driverPeer is the registry entry of a job system behind its driver
// (package driver, docs/drivers.md).
func driverPeer(ds driver.Spec) Backend {
	d := driver.DeclaredBy[ds.Name]
	caps := spec.Caps(jobstore.CapDelayedJobs, jobstore.CapNativeDelay, jobstore.CapRetries)
	if d.Recovers {
		caps[jobstore.CapSelfRecovery] = true
	}
	opts := []spec.Option{spec.PeerModeOption()}
	for _, o := range d.Options {
		allowed := "true or false"
		if o.Duration {
			allowed = "a duration from 1ms to 24h"
		}
		opts = append(opts, spec.Option{Name: o.Name, Allowed: allowed, Default: o.Default, Doc: o.Doc})
	}
	return Backend{Name: ds.Name, Kind: KindPeer, Doc: d.Doc, Driver: &ds, Loses: d.Loses, NativeQueues: d.Queues,
		Limits:  "runs its jobs in its own worker processes (workers.processes = workers.count); one Redis server, no cluster; no Cancel; records are the system's",
		Caps:    caps,
		Options: opts,
		New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
			native, err := spec.PeerMode(ds.Name, extra)
			if err != nil {
				return nil, err
			}
			own, err := driver.ParseOptions(ds.Name, extra)
			if err != nil {
				return nil, err
			}
			return driver.New(ctx, c, o, ds, native, own)
		}}
}
