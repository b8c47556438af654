// Package registry lists the backends by name, with the options each takes
// beyond jobstore.Options, so the harness, the CLI and the conformance suite
// build any of them from a name and a map of settings (as read from a
// scenario file) without importing each backend themselves.
package registry

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aebench/aebench/backends/asynq"
	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/dual"
	"github.com/aebench/aebench/backends/floor"
	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/stream"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Option documents one backend-specific setting.
type Option struct {
	Name    string // key in the scenario's backend options
	Allowed string // what values are allowed, for error messages and docs
	Default string
	Doc     string
}

// Backend is one strategy.
type Backend struct {
	Name    string
	Doc     string
	Options []Option
	// New builds a store. extra holds the backend-specific settings by
	// Option.Name, as strings ("1s", "claim"); a bad value is an error naming
	// the key and what is allowed. Build also rejects unknown keys.
	New func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error)
}

// All returns every backend, in a fixed order.
func All() []Backend {
	return []Backend{
		{Name: "zset", Doc: "sorted set scored by RunAt; claim blocks on a wake-up marker (or polls)",
			Options: []Option{
				{Name: base.OptionWait, Allowed: base.WaitBlock + " or " + base.WaitPoll, Default: base.WaitBlock,
					Doc: "how a waiting Claim waits: BZPOPMIN on a wake-up marker, or a pop every store.poll_interval (the seeds' way)"},
			},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				cfg, err := zset.ParseConfig(extra)
				if err != nil {
					return nil, err
				}
				return zset.NewWith(ctx, c, o, cfg)
			}},
		{Name: "bucket", Doc: "time buckets: delayed jobs in a HASH per RunAt window, promoted into a ready sorted set; claim blocks on a wake-up marker (or polls)",
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
		{Name: "stream", Doc: "one stream and consumer group for all jobs; delayed jobs re-appended until due; blocking claim",
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				return stream.New(ctx, c, o)
			}},
		{Name: "dual", Doc: "delayed jobs in a sorted set, promoted into a stream with a consumer group; blocking claim",
			Options: []Option{
				{Name: dual.OptionMover, Allowed: dual.MoverClaim + " or " + dual.MoverBackground, Default: dual.MoverClaim,
					Doc: "who promotes due jobs: each Claim round before reading, or a background loop calling Promote"},
				{Name: dual.OptionBatch, Allowed: "a whole number from 1 to 1000", Default: strconv.Itoa(dual.DefaultBatch),
					Doc: "how many due jobs a Claim round promotes in claim mode"},
			},
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				cfg, err := dual.ParseConfig(extra)
				if err != nil {
					return nil, err
				}
				return dual.NewWith(ctx, c, o, cfg)
			}},
		// floor is a reference, not a job store: floor.Limits says what it
		// does not guarantee.
		{Name: "floor", Doc: floor.Doc,
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				return floor.New(ctx, c, o)
			}},
		// asynq is a peer: asynq.Limits says what it does not guarantee.
		{Name: "asynq", Doc: asynq.Doc, Options: asynqOptions(),
			New: func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
				cfg, err := asynq.ParseConfig(extra)
				if err != nil {
					return nil, err
				}
				return asynq.NewWith(ctx, c, o, cfg)
			}},
	}
}

func asynqOptions() []Option {
	var out []Option
	for _, o := range asynq.Options() {
		out = append(out, Option(o))
	}
	return out
}

// Build checks extra's keys against b.Options, then builds the store.
func (b Backend) Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	if err := CheckKeys(b.Name, extra, b.Options); err != nil {
		return nil, err
	}
	return b.New(ctx, c, o, extra)
}

// Lookup finds a backend by name; the error lists the names there are.
func Lookup(name string) (Backend, error) {
	var names []string
	for _, b := range All() {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Backend{}, fmt.Errorf("unknown backend %q: allowed are %s", name, strings.Join(names, ", "))
}

// CheckKeys rejects keys of extra that opts does not list.
func CheckKeys(backend string, extra map[string]string, opts []Option) error {
	var bad []string
	for k := range extra {
		found := false
		for _, o := range opts {
			found = found || o.Name == k
		}
		if !found {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	var allowed []string
	for _, o := range opts {
		allowed = append(allowed, o.Name)
	}
	if len(allowed) == 0 {
		return fmt.Errorf("%w: backend %s: unknown option(s) %s: it takes no options", jobstore.ErrInvalid, backend, strings.Join(bad, ", "))
	}
	return fmt.Errorf("%w: backend %s: unknown option(s) %s: allowed are %s", jobstore.ErrInvalid, backend, strings.Join(bad, ", "), strings.Join(allowed, ", "))
}
