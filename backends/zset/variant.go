package zset

import (
	"context"
	"fmt"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptUnfencedComplete = base.NewScript("unfenced_complete")
	scriptUnfencedFail     = base.NewScript("unfenced_fail")
)

// Seed variants: the option "variant" (base.OptionVariant) builds, instead
// of the corrected store, one that reproduces ONE known flaw of a seed
// design on purpose, so that a run shows the flaw with numbers (lost,
// duplicated or early jobs in the ledger). They are off by default, declare jobstore.CapSeedVariant
// (the harness then reports their lost or early jobs as expected for the
// variant, not as a failure, and labels them "seed variant"), and lack the
// core capabilities their flaw breaks, so the conformance suite skips those
// cases by name.
const (
	// VariantSeed004 pops due ids before processing (seed004.go).
	VariantSeed004 = "seed004"
	// VariantSeed001 reads the head outside Lua and strands retries whose
	// delay is ahead (seed001.go).
	VariantSeed001 = "seed001"
	// VariantSeed001Reply is seed001 whose claims parse the claim script's
	// reply the seed's way, one index off (seed001reply.go).
	VariantSeed001Reply = "seed001-reply"
	// VariantSeed002 recovers by SCANning every key (seed002.go).
	VariantSeed002 = "seed002"
	// VariantSeed002Formats is seed002 whose recovery writes Unix seconds
	// where seed 001 parses dates (seed002formats.go).
	VariantSeed002Formats = "seed002-formats"
	// VariantUnfenced updates a job after its claim without fencing (unfenced.go).
	VariantUnfenced = "unfenced"
)

// OptionEncoding overrides the scenario's record encoding for this
// backend only (so one run can hold a hash and a JSON store side by side).
const OptionEncoding = "encoding"

// VariantAllowed lists the values of the option "variant", for the registry.
const VariantAllowed = base.VariantOff + ", " + VariantSeed004 + ", " + VariantSeed001 + ", " + VariantSeed001Reply + ", " + VariantSeed002 + ", " + VariantSeed002Formats + " or " + VariantUnfenced

// VariantDoc describes the option "variant", for the registry.
const VariantDoc = "seed variant (off by default; reproduces one seed flaw on purpose): " +
	"seed004 pops due ids (ZRANGEBYSCORE + ZREM, batch 20) with no lease and polls: a crash between pop and finish loses the job; " +
	"seed001 reads the head outside Lua then claims that one id (claimers race for it: claim errors ALREADY_ASSIGNED), and its UpdateJob re-adds a retry to the queue only when already due: a retry with a backoff ahead is in no queue and never runs; " +
	"seed001-reply is seed001 whose claims parse the script's reply the seed's way: the reply holds WorkerId at index 12, where the parser reads CreatedAt, so every claim fails (JOB_CONSTRUCTION_ERROR) after marking its job InProgress and taking it out of the queue; " +
	"seed002 recovers with the seed's script that SCANs every key and builds key names in Lua: its cost grows with the keys in Redis; " +
	"seed002-formats is seed002 whose recovery writes RetryDelayUntil and LastUpdatedAt as Unix seconds, as seed 002's script does, where seed 001's reader parses dates: a record it dead-lettered can never be read again; " +
	"unfenced: Complete and Fail do not check the lease: a worker whose job was recovered overwrites its state"

// Build builds the store extra describes: the corrected Store, or the seed
// variant option "variant" names.
func Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	variant, rest, err := base.VariantOption("zset", extra, VariantSeed004, VariantSeed001, VariantSeed001Reply, VariantSeed002, VariantSeed002Formats, VariantUnfenced)
	if err != nil {
		return nil, err
	}
	if enc, ok := rest[OptionEncoding]; ok {
		delete(rest, OptionEncoding)
		if enc != string(jobstore.EncodingHash) && enc != string(jobstore.EncodingJSON) {
			return nil, fmt.Errorf("%w: backend zset: option %s %q: allowed are %s and %s", jobstore.ErrInvalid, OptionEncoding, enc,
				jobstore.EncodingHash, jobstore.EncodingJSON)
		}
		o.Encoding = jobstore.Encoding(enc)
	}
	if io, ok := rest[OptionRecordIO]; ok {
		delete(rest, OptionRecordIO)
		switch {
		case io == RecordIOClient && variant == base.VariantOff && rest[base.OptionWait] != base.WaitBlock:
			return newClientJSON(ctx, c, o)
		case io != RecordIOScript:
			return nil, fmt.Errorf("%w: backend zset: option %s %q: allowed are %s and %s (client: without a variant, and claims poll)",
				jobstore.ErrInvalid, OptionRecordIO, io, RecordIOScript, RecordIOClient)
		}
	}
	cfg, err := ParseConfig(rest)
	if err != nil {
		return nil, err
	}
	switch variant {
	case base.VariantOff:
		return NewWith(ctx, c, o, cfg)
	case VariantSeed004, VariantSeed001, VariantSeed001Reply, VariantSeed002, VariantSeed002Formats:
		// The seeds' workers poll: the variant has no wake-up marker.
		if w, set := rest[base.OptionWait]; set && w != base.WaitPoll {
			return nil, fmt.Errorf("%w: backend zset: option %s %q with variant %s: this seed variant polls (the seed's way); allowed is %q or leaving %s out",
				jobstore.ErrInvalid, base.OptionWait, w, variant, base.WaitPoll, base.OptionWait)
		}
		s, err := NewWith(ctx, c, o, Config{Poll: true})
		if err != nil {
			return nil, err
		}
		switch variant {
		case VariantSeed004:
			return &Seed004{Unfenced{Store: s}}, nil
		case VariantSeed002, VariantSeed002Formats:
			return &Seed002{Store: s, formats: variant == VariantSeed002Formats}, nil
		}
		return &Seed001{Store: s, reply: variant == VariantSeed001Reply}, nil
	}
	s, err := NewWith(ctx, c, o, cfg) // VariantUnfenced
	if err != nil {
		return nil, err
	}
	return &Unfenced{Store: s}, nil
}

// withoutCore returns cs (which declares every core capability) without
// the ones a variant's flaw breaks, plus CapSeedVariant.
func withoutCore(cs jobstore.Capabilities, broken ...jobstore.Capability) jobstore.Capabilities {
	for _, c := range broken {
		delete(cs, c)
	}
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// completeUnfenced is the seeds' unfenced Complete (unfenced_complete.lua).
func (s *Store) completeUnfenced(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.CompleteWith(ctx, scriptUnfencedComplete, l, result, nil)
}

// failUnfenced is the seeds' unfenced Fail (unfenced_fail.lua).
func (s *Store) failUnfenced(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.FailWith(ctx, scriptUnfencedFail, l, reason, func(_ time.Time) []string {
		return append([]string{s.queue}, s.marker...)
	})
}
