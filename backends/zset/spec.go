package zset

import (
	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/spec"
	"github.com/aebench/aebench/jobstore"
)

// Spec is what this backend declares to the registry (package spec): its
// name, kind, doc, options, capabilities and constructor.
func Spec() spec.Spec {
	return spec.Spec{Name: "zset", Kind: spec.KindJobStore, Doc: "sorted set scored by RunAt; claim blocks on a wake-up marker (or polls)",
		Caps: spec.Caps(jobstore.CapNativeDelay, jobstore.CapStoreClockLeases, jobstore.CapStrictFIFO, jobstore.CapExactStats, jobstore.CapBlockingClaim, jobstore.CapBatchComplete).WithCore(),
		Options: []spec.Option{
			{Name: base.OptionWait, Allowed: base.WaitBlock + " or " + base.WaitPoll, Default: base.WaitBlock,
				Doc: "how a waiting Claim waits: BZPOPMIN on a wake-up marker, or a pop every store.poll_interval (the seeds' way)"},
			{Name: base.OptionVariant, Allowed: VariantAllowed, Default: base.VariantOff, Doc: VariantDoc},
			{Name: OptionEncoding, Allowed: "hash or json", Default: "the scenario's encoding",
				Doc: "the record encoding of this backend only, over the scenario's encoding (a hash and a JSON store in one run)"},
			{Name: OptionRecordIO, Allowed: RecordIOScript + " or " + RecordIOClient, Default: RecordIOScript,
				Doc: "where records are read and written: inside the Lua scripts, or by the client as one JSON string with a compare-and-set, " +
					"as AsyncEndpoints' JSON RedisJobStore does (records JSON whatever the encoding; claims poll; no strict FIFO)"},
		},
		New: Build}
}
