package dual

import (
	"strconv"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "dual", Kind: spec.KindJobStore, Doc: "delayed jobs in a sorted set, promoted into a stream with a consumer group; blocking claim",
		Caps: spec.Caps(jobstore.CapBlockingClaim, jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapMover, jobstore.CapBatchComplete).WithCore(),
		Options: []spec.Option{
			{Name: OptionMover, Allowed: MoverClaim + " or " + MoverBackground, Default: MoverClaim,
				Doc: "who promotes due jobs: each Claim round before reading, or a background loop calling Promote"},
			{Name: OptionBatch, Allowed: "a whole number from 1 to 1000", Default: strconv.Itoa(DefaultBatch),
				Doc: "how many due jobs a Claim round promotes in claim mode"},
			{Name: base.OptionVariant, Allowed: VariantAllowed, Default: base.VariantOff, Doc: VariantDoc},
			{Name: OptionSeedMover, Allowed: SeedApproach1 + " or " + SeedApproach2 + ", with variant " + VariantSeed000 + " only",
				Default: "approach1 in mover claim, approach2 in mover background",
				Doc:     "which of seed 000's movers the variant's Promote runs: approach 1's read then ZREM and XADD per job, or approach 2's five-second look-ahead"},
		},
		New: Build}
}
