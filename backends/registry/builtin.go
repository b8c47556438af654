package registry

import (
	"context"
	"strconv"

	"github.com/aebench/aebench/backends/asynq"
	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/dual"
	"github.com/aebench/aebench/backends/floor"
	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/null"
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
		{Name: "zset", Kind: KindJobStore, Doc: "sorted set scored by RunAt; claim blocks on a wake-up marker (or polls)",
			Caps: storeCaps(jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapBlockingClaim, jobstore.CapBatchComplete).WithCore(),
			Options: []Option{
				{Name: base.OptionWait, Allowed: base.WaitBlock + " or " + base.WaitPoll, Default: base.WaitBlock,
					Doc: "how a waiting Claim waits: BZPOPMIN on a wake-up marker, or a pop every store.poll_interval (the seeds' way)"},
				{Name: base.OptionVariant, Allowed: zset.VariantAllowed, Default: base.VariantOff, Doc: zset.VariantDoc},
				{Name: zset.OptionEncoding, Allowed: "hash or json", Default: "the scenario's encoding",
					Doc: "the record encoding of this backend only, over the scenario's encoding (a hash and a JSON store in one run)"},
				{Name: zset.OptionRecordIO, Allowed: zset.RecordIOScript + " or " + zset.RecordIOClient, Default: zset.RecordIOScript,
					Doc: "where records are read and written: inside the Lua scripts, or by the client as one JSON string with a compare-and-set, " +
						"as AsyncEndpoints' JSON RedisJobStore does (records JSON whatever the encoding; claims poll; no strict FIFO)"},
			},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				return zset.Build(ctx, c, o, extra)
			}},
		{Name: "bucket", Kind: KindJobStore, Doc: "time buckets: delayed jobs in a HASH per RunAt window, promoted into a ready sorted set; claim blocks on a wake-up marker (or polls)",
			Caps: storeCaps(jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapMover, jobstore.CapBlockingClaim, jobstore.CapBatchComplete).WithCore(),
			Options: []Option{
				{Name: bucket.OptionWidth, Allowed: "a duration >= 1ms in whole milliseconds", Default: bucket.DefaultWidth.String(),
					Doc: "width of a bucket's RunAt window"},
				{Name: bucket.OptionMover, Allowed: bucket.MoverClaim + " or " + bucket.MoverBackground, Default: bucket.MoverClaim,
					Doc: "who promotes due buckets: each Claim before popping, or a background loop calling Promote"},
				{Name: bucket.OptionWait, Allowed: base.WaitBlock + " or " + base.WaitPoll, Default: base.WaitBlock,
					Doc: "how a waiting Claim waits: BZPOPMIN on a wake-up marker, or a move every store.poll_interval (the seeds' way)"},
			},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				cfg, err := bucket.ParseConfig(extra)
				if err != nil {
					return nil, err
				}
				return bucket.NewWith(ctx, c, o, cfg)
			}},
		{Name: "stream", Kind: KindJobStore, Doc: "one stream and consumer group for all jobs; delayed jobs re-appended until due; blocking claim",
			Caps: storeCaps(jobstore.CapBlockingClaim, jobstore.CapStoreClockLeases, jobstore.CapBatchComplete).WithCore(),
			// 12 runs of scenarios/ci-cost.yaml (2026-11-26): instructions
			// per job 526k-548k, commands per job 23.3-23.8.
			CountNoise: 0.05, CountNoiseWhy: "a delayed job is re-appended each time a claim reads it early, and reads walk past the " +
				"deleted entries of the stream's nodes: how many of each, timing decides (instructions per job moved 4%, commands 2%, between runs of one plan)",
			Options: []Option{{Name: base.OptionVariant, Allowed: stream.VariantAllowed, Default: base.VariantOff, Doc: stream.VariantDoc},
				{Name: stream.OptionMaxLen, Allowed: "a whole number >= 1, with variant " + stream.VariantSeed003MaxLen + " only", Default: strconv.Itoa(stream.DefaultMaxLen),
					Doc: "the MAXLEN ~ of the seed003-maxlen variant's XADD"}},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				return stream.Build(ctx, c, o, extra)
			}},
		{Name: "dual", Kind: KindJobStore, Doc: "delayed jobs in a sorted set, promoted into a stream with a consumer group; blocking claim",
			Caps: storeCaps(jobstore.CapBlockingClaim, jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapMover, jobstore.CapBatchComplete).WithCore(),
			Options: []Option{
				{Name: dual.OptionMover, Allowed: dual.MoverClaim + " or " + dual.MoverBackground, Default: dual.MoverClaim,
					Doc: "who promotes due jobs: each Claim round before reading, or a background loop calling Promote"},
				{Name: dual.OptionBatch, Allowed: "a whole number from 1 to 1000", Default: strconv.Itoa(dual.DefaultBatch),
					Doc: "how many due jobs a Claim round promotes in claim mode"},
				{Name: base.OptionVariant, Allowed: dual.VariantAllowed, Default: base.VariantOff, Doc: dual.VariantDoc},
				{Name: dual.OptionSeedMover, Allowed: dual.SeedApproach1 + " or " + dual.SeedApproach2 + ", with variant " + dual.VariantSeed000 + " only",
					Default: "approach1 in mover claim, approach2 in mover background",
					Doc:     "which of seed 000's movers the variant's Promote runs: approach 1's read then ZREM and XADD per job, or approach 2's five-second look-ahead"},
			},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				return dual.Build(ctx, c, o, extra)
			}},
	}
}

// others are the reference floor, the peers and the calibration store.
func others() []Backend {
	return []Backend{
		{Name: "floor", Kind: KindReference, Doc: floor.Doc, Limits: floor.Limits, Caps: floor.Caps(),
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
				return floor.New(ctx, c, o)
			}},
		{Name: "asynq", Kind: KindPeer, Doc: asynq.Doc, Limits: asynq.Limits, Options: asynqOptions(),
			Caps: asynq.Caps(), SelfRecovering: true,
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				cfg, err := asynq.ParseConfig(extra)
				if err != nil {
					return nil, err
				}
				return asynq.NewWith(ctx, c, o, cfg)
			}},
		driverPeer(driver.BullMQ), driverPeer(driver.Sidekiq), driverPeer(driver.RQ),
		{Name: null.Name, Kind: KindCalibration,
			Doc:    "calibration, not a job store: an in-process queue with blocking claim, used to measure the harness's own overhead",
			Limits: "in process memory: nothing survives the process, no Redis, no client",
			Caps: storeCaps(jobstore.CapBlockingClaim, jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO,
				jobstore.CapExactStats, jobstore.CapFencing, jobstore.CapLeaseRecovery, jobstore.CapRetries, jobstore.CapDelayedJobs,
				jobstore.CapCancel, jobstore.CapUniqueIDs, jobstore.CapAtomicBulk, jobstore.CapStoreClock),
			New: func(_ context.Context, _ rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
				return null.New(o)
			}},
	}
}

// driverPeer is the registry entry of a job system behind its driver
// (package driver, docs/drivers.md).
func driverPeer(spec driver.Spec) Backend {
	d := driver.DeclaredBy[spec.Name]
	return Backend{Name: spec.Name, Kind: KindPeer, Doc: d.Doc, Driver: &spec, Loses: d.Loses, SelfRecovering: d.Recovers,
		Limits: "runs its jobs in its own worker processes (workers.processes = workers.count); one Redis server, no cluster; no Cancel; records are the system's",
		Caps:   storeCaps(jobstore.CapDelayedJobs, jobstore.CapNativeDelay, jobstore.CapRetries),
		New: func(ctx context.Context, c rclient.Client, o jobstore.Options, _ map[string]string) (jobstore.Store, error) {
			return driver.New(ctx, c, o, spec)
		}}
}

// storeCaps is a capability set; Caps of the job stores are their default
// options' (the built store's Capabilities decide a run).
func storeCaps(cs ...jobstore.Capability) jobstore.Capabilities {
	out := jobstore.Capabilities{}
	for _, c := range cs {
		out[c] = true
	}
	return out
}

// asynqOptions converts asynq's option list: the backend cannot import this
// package (this package imports it).
func asynqOptions() []Option {
	var out []Option
	for _, o := range asynq.Options() {
		out = append(out, Option(o))
	}
	return out
}
