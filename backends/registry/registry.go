// Package registry lists the backends by name, with the options each takes
// beyond jobstore.Options, so the harness, the CLI and the conformance suite
// build any of them from a name and a map of settings (as read from a
// scenario file) without importing each backend themselves.
package registry

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/queues"
	"github.com/aebench/aebench/backends/shard"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Option documents one backend-specific setting (package spec's, which
// the backends declare theirs with).
type Option = spec.Option

// Kind says what a backend is for.
type Kind = spec.Kind

// The kinds of backend. Only a calibration backend is treated apart: its
// numbers measure the harness, not a strategy, and it needs no Redis.
const (
	KindJobStore    = spec.KindJobStore
	KindReference   = spec.KindReference
	KindCalibration = spec.KindCalibration
	KindPeer        = spec.KindPeer
)

// FromSpec is the registry entry of a backend's own declaration.
func FromSpec(s spec.Spec) Backend {
	return Backend{Name: s.Name, Kind: s.Kind, Doc: s.Doc, Limits: s.Limits, Options: s.Options, Caps: s.Caps,
		CountNoise: s.CountNoise, CountNoiseWhy: s.CountNoiseWhy, NativeQueues: s.NativeQueues, New: s.New}
}

// Backend is one strategy.
type Backend struct {
	Name    string
	Kind    Kind
	Doc     string
	Options []Option
	// Limits says what the backend cannot do, for docs; empty: none known.
	Limits string
	// Caps is what the backend declares with its default options (aebench
	// list prints it). The built store's Capabilities is what a run goes
	// by: an option may change it (a polling claim is not blocking).
	Caps jobstore.Capabilities
	// Driver: the backend is a job system behind its driver process
	// (docs/drivers.md); aebench list probes it.
	Driver *driver.Spec
	// CountNoise is the run-to-run spread, as a fraction, that the
	// backend's design leaves in its counted per-job costs (commands,
	// bytes and instructions per job) even on a fixed plan of jobs, and
	// CountNoiseWhy why: compare gates those metrics no tighter than it
	// (harness/verdict). 0: the metrics' own floors hold.
	CountNoise    float64
	CountNoiseWhy string
	// Loses lists the fault kinds under which the backend declares losing
	// the jobs a fault catches in flight (jobstore.LossDeclarer): scenarios
	// with only those faults apply to it although it does not recover.
	Loses []string
	// NativeQueues lists the claim policies (store.queue_policy) of a peer
	// that keeps several queues itself (jobstore.Options.Queues): it runs
	// store.queues natively instead of split by backends/queues.
	NativeQueues []string
	// New builds a store. extra holds the backend-specific settings by
	// Option.Name, as strings ("1s", "claim"); a bad value is an error naming
	// the key and what is allowed. Build also rejects unknown keys. The
	// client is nil for a calibration backend.
	New func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error)
}

// Build checks extra's keys against b.Options, then builds the store.
func (b Backend) Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	if err := CheckKeys(b.Name, extra, b.Options); err != nil {
		return nil, err
	}
	return b.New(ctx, c, o, extra)
}

// BuildShards builds the store as Build does when shards is 1, and as a
// sharded store of that many (package shard) when it is more: each shard
// is Build's store on its own queue, <o.Queue>.s<i>-<k>. Only job stores
// and the reference floor can be sharded: a peer names its own keys and
// the calibration store has no Redis.
func (b Backend) BuildShards(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string, shards int) (jobstore.Store, error) {
	if shards <= 1 {
		return b.Build(ctx, c, o, extra)
	}
	if !b.Shardable() {
		return nil, fmt.Errorf("%w: backend %s (%s): store.shards %d: only job stores and the reference can be sharded; allowed is 1", jobstore.ErrInvalid, b.Name, b.Kind, shards)
	}
	if err := CheckKeys(b.Name, extra, b.Options); err != nil {
		return nil, err
	}
	return shard.New(ctx, o.Queue, shard.Options{Shards: shards, Clock: o.Clock},
		func(ctx context.Context, _ int, queue string) (jobstore.Store, error) {
			so := o
			so.Queue = queue
			return b.New(ctx, c, so, extra)
		})
}

// BuildQueues builds the store as BuildShards does with no queues, and as
// one store per queue under a claim policy (package queues) with two or
// more: each queue is Build's store on its own queue, <o.Queue>.<name>.
// What can be sharded can be split into queues.
func (b Backend) BuildQueues(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string, shards int, qs []jobstore.QueueWeight, policy string) (jobstore.Store, error) {
	if len(qs) == 0 {
		return b.BuildShards(ctx, c, o, extra, shards)
	}
	if len(b.NativeQueues) > 0 && shards <= 1 {
		// A peer with queues of its own runs them natively.
		if !slices.Contains(b.NativeQueues, policy) {
			return nil, fmt.Errorf("%w: backend %s: store.queue_policy %s: it claims %s only", jobstore.ErrInvalid, b.Name, policy, strings.Join(b.NativeQueues, ", "))
		}
		o.Queues, o.QueuePolicy = qs, policy
		return b.Build(ctx, c, o, extra)
	}
	if !b.Shardable() || shards > 1 {
		return nil, fmt.Errorf("%w: backend %s (%s): store.queues: only job stores and the reference, unsharded, split into queues", jobstore.ErrInvalid, b.Name, b.Kind)
	}
	if err := CheckKeys(b.Name, extra, b.Options); err != nil {
		return nil, err
	}
	return queues.New(ctx, o.Queue, qs, policy, o.Clock, func(ctx context.Context, _ int, queue string) (jobstore.Store, error) {
		so := o
		so.Queue = queue
		return b.New(ctx, c, so, extra)
	})
}

// Shardable is the one rule of what store.shards may split: job stores and
// the reference floor; a peer names its own keys and the calibration store
// has no Redis.
func (b Backend) Shardable() bool { return b.Kind == KindJobStore || b.Kind == KindReference }

// CapList names the capabilities cs declares, in jobstore.KnownCapabilities
// order.
func CapList(cs jobstore.Capabilities) []string {
	var out []string
	for _, c := range jobstore.KnownCapabilities() {
		if cs.Has(c) {
			out = append(out, string(c))
		}
	}
	return out
}

// Registry is an ordered list of backends with unique names. The CLI, the
// harness and the conformance suite read one; a program adds its own
// backends to it, so nothing here is global.
type Registry struct {
	backends []Backend
}

// New returns a registry of bs, in that order; it rejects an empty or
// duplicate name and a backend without New.
func New(bs ...Backend) (*Registry, error) {
	r := &Registry{}
	for _, b := range bs {
		if err := r.Add(b); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add appends b; it rejects an empty or duplicate name and a backend
// without New.
func (r *Registry) Add(b Backend) error {
	switch {
	case b.Name == "":
		return fmt.Errorf("%w: registry: a backend needs a name", jobstore.ErrInvalid)
	case b.New == nil:
		return fmt.Errorf("%w: registry: backend %s has no New", jobstore.ErrInvalid, b.Name)
	}
	for _, x := range r.backends {
		if x.Name == b.Name {
			return fmt.Errorf("%w: registry: backend %s is listed twice", jobstore.ErrInvalid, b.Name)
		}
	}
	if b.Kind == "" {
		b.Kind = KindJobStore
	}
	r.backends = append(r.backends, b)
	return nil
}

// All returns every backend, in order.
func (r *Registry) All() []Backend { return append([]Backend(nil), r.backends...) }

// Names lists the backends' names, in order.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.backends))
	for _, b := range r.backends {
		out = append(out, b.Name)
	}
	return out
}

// Lookup finds a backend by name; the error lists the names there are.
func (r *Registry) Lookup(name string) (Backend, error) {
	for _, b := range r.backends {
		if b.Name == name {
			return b, nil
		}
	}
	return Backend{}, fmt.Errorf("unknown backend %q: allowed are %s", name, strings.Join(r.Names(), ", "))
}

// Lookup finds a built-in backend by name (Builtin().Lookup).
func Lookup(name string) (Backend, error) { return Builtin().Lookup(name) }

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
