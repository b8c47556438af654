package bucket

import (
	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "bucket", Kind: spec.KindJobStore, Doc: "time buckets: delayed jobs in a HASH per RunAt window, promoted into a ready sorted set; claim blocks on a wake-up marker (or polls)",
		Caps: spec.Caps(jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapMover, jobstore.CapBlockingClaim, jobstore.CapBatchComplete).WithCore(),
		Options: []spec.Option{
			{Name: OptionWidth, Allowed: "a duration >= 1ms in whole milliseconds", Default: DefaultWidth.String(),
				Doc: "width of a bucket's RunAt window"},
			{Name: OptionMover, Allowed: MoverClaim + " or " + MoverBackground, Default: MoverClaim,
				Doc: "who promotes due buckets: each Claim before popping, or a background loop calling Promote"},
			{Name: OptionWait, Allowed: base.WaitBlock + " or " + base.WaitPoll, Default: base.WaitBlock,
				Doc: "how a waiting Claim waits: BZPOPMIN on a wake-up marker, or a move every store.poll_interval (the seeds' way)"},
			{Name: base.OptionVariant, Allowed: VariantAllowed, Default: base.VariantOff, Doc: VariantDoc},
		},
		New: Build}
}
