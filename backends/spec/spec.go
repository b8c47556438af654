// Package spec is what a backend says of itself: its name, kind, doc,
// limits, options, capabilities and constructor. Each backend package
// exports its Spec beside its code; package registry lists them. It sits
// below the backends, so they declare themselves without importing the
// registry, which imports them.
package spec

import (
	"context"
	"fmt"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Option documents one backend-specific setting.
type Option struct {
	Name    string // key in the scenario's backend options
	Allowed string // what values are allowed, for error messages and docs
	Default string
	Doc     string
	// ClaimPoll marks the option whose value is how long an idle claim
	// waits before it looks again (a store that polls instead of blocking
	// on its own interval, not the scenario's store.poll_interval).
	ClaimPoll bool
}

// Kind says what a backend is for (jobstore.Kind: the results name a
// run's kind without linking any backend).
type Kind = jobstore.Kind

// The kinds of backend.
const (
	KindJobStore    = jobstore.KindJobStore
	KindReference   = jobstore.KindReference
	KindCalibration = jobstore.KindCalibration
	KindPeer        = jobstore.KindPeer
)

// Spec is a backend's declaration (registry.Backend adds what only the
// registry knows: drivers and the declared losses).
type Spec struct {
	Name    string
	Kind    Kind
	Doc     string
	Limits  string
	Options []Option
	// Caps is what the backend declares with its default options.
	Caps jobstore.Capabilities
	// CountNoise and CountNoiseWhy: the spread its design leaves in its
	// counted per-job costs, and why (registry.Backend says more).
	CountNoise    float64
	CountNoiseWhy string
	// NativeQueues: the claim policies of a peer that keeps several queues
	// itself (registry.Backend.NativeQueues).
	NativeQueues []string
	// New builds a store from the scenario's options for it, by name.
	New func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error)
}

// Caps returns the capabilities named, as a set.
func Caps(cs ...jobstore.Capability) jobstore.Capabilities {
	out := jobstore.Capabilities{}
	for _, c := range cs {
		out[c] = true
	}
	return out
}

// Configured is a Spec's New for a backend that parses its options into a
// Config of its own and builds from that: parse, then build.
func Configured[C any, S jobstore.Store](parse func(extra map[string]string) (C, error),
	build func(ctx context.Context, c rclient.Client, o jobstore.Options, cfg C) (S, error)) func(context.Context, rclient.Client, jobstore.Options, map[string]string) (jobstore.Store, error) {
	return func(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
		cfg, err := parse(extra)
		if err != nil {
			return nil, err
		}
		return build(ctx, c, o, cfg)
	}
}

// OptionPeerMode is the option every peer takes: how it keeps finished
// jobs. PeerContract (the default) keeps them for Options.Retention, as
// the strategies do, so the ledger's read-back and Get read them;
// PeerNative runs the peer on the defaults its own documents give
// (BullMQ removeOnComplete, RQ's default result_ttl, asynq without
// Retention), its cheapest honest setting. What the read-back can no
// longer confirm there the store declares (jobstore.FinishedRemover).
const (
	OptionPeerMode = "peer_mode"
	PeerContract   = "contract"
	PeerNative     = "native"
)

// PeerModeOption documents OptionPeerMode.
func PeerModeOption() Option {
	return Option{Name: OptionPeerMode, Allowed: PeerContract + " or " + PeerNative, Default: PeerContract,
		Doc: "contract: finished jobs kept for store.retention (the ledger reads them back); native: the peer's own documented defaults for finished jobs (its cheapest setting)"}
}

// PeerMode reads OptionPeerMode from a peer's options: true for native.
func PeerMode(backend string, extra map[string]string) (native bool, err error) {
	switch v, ok := extra[OptionPeerMode]; {
	case !ok || v == PeerContract:
		return false, nil
	case v == PeerNative:
		return true, nil
	default:
		return false, fmt.Errorf("%w: backend %s: option %s %q: allowed is %s or %s", jobstore.ErrInvalid, backend, OptionPeerMode, v, PeerContract, PeerNative)
	}
}
