package stream

import (
	"strconv"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "stream", Kind: spec.KindJobStore, Doc: "one stream and consumer group for all jobs; delayed jobs re-appended until due; blocking claim",
		Caps: spec.Caps(jobstore.CapBlockingClaim, jobstore.CapStoreClockLeases, jobstore.CapBatchComplete).WithCore(),
		// 12 runs of scenarios/ci-cost.yaml (2026-11-26): instructions
		// per job 526k-548k, commands per job 23.3-23.8.
		CountNoise: 0.05, CountNoiseWhy: "a delayed job is re-appended each time a claim reads it early, and reads walk past the " +
			"deleted entries of the stream's nodes: how many of each, timing decides (instructions per job moved 4%, commands 2%, between runs of one plan)",
		Options: []spec.Option{{Name: base.OptionVariant, Allowed: VariantAllowed, Default: base.VariantOff, Doc: VariantDoc},
			{Name: OptionMaxLen, Allowed: "a whole number >= 1, with variant " + VariantSeed003MaxLen + " only", Default: strconv.Itoa(DefaultMaxLen),
				Doc: "the MAXLEN ~ of the seed003-maxlen variant's XADD"}},
		New: Build}
}
