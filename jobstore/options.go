package jobstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/aebench/aebench/clock"
)

// Encoding selects how a job record is laid out in Redis.
type Encoding string

const (
	// EncodingHash keeps a record as a Redis hash, one field per Job field (seed 001).
	EncodingHash Encoding = "hash"
	// EncodingJSON keeps a record as one JSON string (what seed 001 replaced).
	// Payloads must then be valid UTF-8.
	EncodingJSON Encoding = "json"
)

// Backoff is the retry delay after the n-th failure: Base * 2^n, capped at
// Max, then multiplied by a random factor in [1-Jitter, 1+Jitter].
type Backoff struct {
	Base   time.Duration
	Max    time.Duration
	Jitter float64
}

// Delay returns the un-jittered delay before retry n (n counts from 0).
func (b Backoff) Delay(n int) time.Duration {
	d := b.Base
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	return d
}

// QueueWeight is one queue of a store with several (CapQueues): its name
// and its weight under a weighted claim policy.
type QueueWeight struct {
	Name   string
	Weight int
}

// Options are the settings every backend shares, in go-redis's style: the zero
// value of each field means its documented default.
type Options struct {
	// Queues, for a store that keeps several queues natively (a peer with
	// its own weighted or strict queues): their names, highest priority
	// first, with weights; QueuePolicy how its workers take from them
	// ("strict", "weighted"). Empty: one queue. Each is <Queue>.<name>.
	Queues      []QueueWeight
	QueuePolicy string
	// Queue names the queue; its keys share the hash tag {Queue}, so one queue
	// lives in one Cluster slot and several queues can share a Redis.
	// Default "default". Letters, digits, '-', '_' and '.' only.
	Queue string
	// Encoding of job records. Default EncodingHash.
	Encoding Encoding
	// Clock makes every time decision. Default clock.Real{}.
	Clock clock.Clock
	// Retention is how long a Completed, Failed or Canceled record is kept,
	// at least. Default 24h. A store may let records it finished in a batch
	// (CompleteMany) go at a later sweep rather than on the dot: the four
	// strategies delete them at the next CompleteMany or Recover after
	// Retention on the store's clock (backends/internal/base, retire).
	Retention time.Duration
	// MaxPayload is the largest payload Enqueue accepts, in bytes. Default 1 MiB.
	MaxPayload int
	// Backoff for retries after Fail. Default base 5s (seed 002), max 1h, no jitter.
	Backoff Backoff
	// PollInterval is how often a waiting Claim polls on backends that cannot
	// block in Redis. Default 100ms.
	PollInterval time.Duration
	// Seed seeds the store's jitter; 0 takes one from the clock.
	Seed int64
	// WaitReplicas > 0: Enqueue sends WAIT WaitReplicas WaitTimeout after its
	// write, on the same connection, and returns once that many replicas
	// have the jobs, or ErrNotReplicated when fewer confirmed them within
	// the timeout (the jobs may exist on the master only: not
	// acknowledged). Redis replicates asynchronously; WAIT narrows what a
	// failover loses, it does not make the write durable (a replica may
	// still lose what it confirmed to a failover of its own). Default 0: no
	// WAIT. WaitTimeout defaults to 1s.
	WaitReplicas int
	WaitTimeout  time.Duration
}

// WithDefaults returns o with every zero field set to its default, or an
// ErrInvalid-wrapped error naming the field that is out of range.
func (o Options) WithDefaults() (Options, error) {
	if o.Queue == "" {
		o.Queue = "default"
	}
	if strings.IndexFunc(o.Queue, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return o, fmt.Errorf("%w: Options.Queue %q: allowed are letters, digits, '-', '_' and '.'", ErrInvalid, o.Queue)
	}
	switch o.Encoding {
	case "":
		o.Encoding = EncodingHash
	case EncodingHash, EncodingJSON:
	default:
		return o, fmt.Errorf("%w: Options.Encoding %q: allowed are %q and %q", ErrInvalid, o.Encoding, EncodingHash, EncodingJSON)
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Retention == 0 {
		o.Retention = 24 * time.Hour
	}
	if o.Retention < time.Millisecond {
		return o, fmt.Errorf("%w: Options.Retention %v: must be at least 1ms", ErrInvalid, o.Retention)
	}
	if o.WaitReplicas < 0 || o.WaitTimeout < 0 {
		return o, fmt.Errorf("%w: Options.WaitReplicas %d, WaitTimeout %v: must not be negative", ErrInvalid, o.WaitReplicas, o.WaitTimeout)
	}
	if o.WaitReplicas > 0 && o.WaitTimeout == 0 {
		o.WaitTimeout = time.Second
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = 1 << 20
	}
	if o.MaxPayload < 0 {
		return o, fmt.Errorf("%w: Options.MaxPayload %d: must be positive", ErrInvalid, o.MaxPayload)
	}
	if o.Backoff.Base == 0 {
		o.Backoff.Base = 5 * time.Second
	}
	if o.Backoff.Max == 0 {
		o.Backoff.Max = time.Hour
	}
	if o.Backoff.Base < 0 || o.Backoff.Max < o.Backoff.Base {
		return o, fmt.Errorf("%w: Options.Backoff base %v max %v: need 0 < base <= max", ErrInvalid, o.Backoff.Base, o.Backoff.Max)
	}
	if o.Backoff.Jitter < 0 || o.Backoff.Jitter >= 1 {
		return o, fmt.Errorf("%w: Options.Backoff.Jitter %v: allowed is 0 <= jitter < 1", ErrInvalid, o.Backoff.Jitter)
	}
	if o.PollInterval == 0 {
		o.PollInterval = 100 * time.Millisecond
	}
	if o.PollInterval < 0 {
		return o, fmt.Errorf("%w: Options.PollInterval %v: must be positive", ErrInvalid, o.PollInterval)
	}
	if o.Seed == 0 {
		o.Seed = o.Clock.Now().UnixNano()
	}
	return o, nil
}

// Capability names one thing a strategy can do. The conformance suite skips a
// case whose capability a backend lacks and names it; reports list them.
type Capability string

const (
	// CapBlockingClaim: a waiting Claim blocks in Redis and wakes when work
	// arrives, instead of polling.
	CapBlockingClaim Capability = "blocking-claim"
	// CapNativeDelay: delayed jobs sit in a structure ordered by RunAt and cost
	// nothing until due (no re-reading of not-yet-due jobs).
	CapNativeDelay Capability = "native-delay"
	// CapStoreClockLeases: lease expiry is judged on the store's clock alone,
	// so Recover works under a controlled clock.
	CapStoreClockLeases Capability = "store-clock-leases"
	// CapStrictFIFO: jobs with equal RunAt are claimed in enqueue order.
	CapStrictFIFO Capability = "strict-fifo"
	// CapExactStats: Stats counts Due and Delayed exactly on the store's clock.
	CapExactStats Capability = "exact-stats"
	// CapMover: the backend implements Mover (it can promote in a separate loop).
	CapMover Capability = "mover"
	// CapMoverLoop: due jobs wait for Promote, so whoever drives the store
	// must run a mover loop (a backend whose mover runs in the background).
	CapMoverLoop Capability = "mover-loop"
	// CapBatchComplete: the store implements BatchCompleter (CompleteMany
	// acknowledges many leases in one call).
	CapBatchComplete Capability = "batch-complete"
	// CapSeedVariant: the store is a seed variant, not a corrected job
	// store: it reproduces one known flaw of a seed design on purpose, so
	// the jobs it loses, duplicates or starts early are reported as
	// expected for it, never as a harness failure.
	CapSeedVariant Capability = "seed-variant"
	// CapClaimConflicts: a Claim may fail when another claimer took the job
	// it read first (a seed variant's flaw: the head is read outside the
	// claim's atomic step), so concurrent claimers get errors.
	CapClaimConflicts Capability = "claim-conflicts"
)

// Core capabilities: the parts of the contract every aebench job store keeps
// (it declares them with Capabilities.WithCore). A store that is not a job
// store in the usual sense (a reference floor, a peer queue) declares only
// those it keeps, and the conformance suite skips what it lacks.
const (
	// CapFencing: a call with a lease that Recover or another claimer took
	// over gets ErrLeaseLost and changes nothing.
	CapFencing Capability = "fencing"
	// CapLeaseRecovery: a claim holds a lease with a deadline, Extend renews
	// it, and Recover requeues (or dead-letters) jobs whose lease expired.
	CapLeaseRecovery Capability = "lease-recovery"
	// CapRetries: Fail with retries left schedules the job again after
	// Options.Backoff (Status Scheduled, RetryCount+1).
	CapRetries Capability = "retries"
	// CapDelayedJobs: a job is never claimed before its RunAt.
	CapDelayedJobs Capability = "delayed-jobs"
	// CapCancel: Cancel cancels a waiting job.
	CapCancel Capability = "cancel"
	// CapUniqueIDs: Enqueue of an id already stored fails with ErrDuplicateID.
	CapUniqueIDs Capability = "unique-ids"
	// CapAtomicBulk: a bulk Enqueue stores every job or, on any error, none.
	CapAtomicBulk Capability = "atomic-bulk"
	// CapRecordEncodings: the store honours Options.Encoding (hash and JSON).
	CapRecordEncodings Capability = "record-encodings"
	// CapRetention: finished records expire after Options.Retention (those
	// finished in a batch at the next sweep after it; Options.Retention).
	CapRetention Capability = "retention"
	// CapQueueOrder: a Claim sees every due job of the queue, so it takes the
	// queue's oldest RunAt first and up to Max at once. A sharded store
	// (backends/shard) orders within one shard only.
	CapQueueOrder Capability = "queue-order"
	// CapStoreClock: every time the store records or decides on (RunAt,
	// retry delays, record timestamps, lease deadlines) comes from
	// Options.Clock, so a controlled clock drives it.
	CapStoreClock Capability = "store-clock"
	// CapSelfRecovery: the system takes back a crashed worker's jobs on its
	// own (asynq's recoverer, BullMQ's stalled check), not through Recover:
	// a scenario with crashes applies to it though it does not declare
	// CapLeaseRecovery, and a run needs no recoverer for it.
	CapSelfRecovery Capability = "self-recovery"
	// CapQueues: the store holds several queues and claims across them by a
	// policy (strict priority, weighted, round-robin; backends/queues):
	// NewJob.Queue picks a job's queue, Job.Queue says where it sits.
	CapQueues Capability = "queues"
)

// CoreCapabilities lists the core capabilities, in a fixed order.
func CoreCapabilities() []Capability {
	return []Capability{CapFencing, CapLeaseRecovery, CapRetries, CapDelayedJobs, CapCancel,
		CapUniqueIDs, CapAtomicBulk, CapRecordEncodings, CapRetention, CapStoreClock, CapQueueOrder}
}

// KnownCapabilities lists every capability the contract defines, in a fixed order.
func KnownCapabilities() []Capability {
	return append([]Capability{CapBlockingClaim, CapNativeDelay, CapStoreClockLeases, CapStrictFIFO,
		CapExactStats, CapMover, CapMoverLoop, CapBatchComplete, CapSeedVariant, CapClaimConflicts, CapSelfRecovery, CapQueues}, CoreCapabilities()...)
}

// Capabilities is the set a backend declares.
type Capabilities map[Capability]bool

// Has reports whether c is declared.
func (cs Capabilities) Has(c Capability) bool { return cs[c] }

// WithCore returns a copy of cs that also declares every core capability:
// what a store that keeps the whole contract returns from Capabilities.
func (cs Capabilities) WithCore() Capabilities {
	out := make(Capabilities, len(cs)+len(CoreCapabilities()))
	for c, on := range cs {
		out[c] = on
	}
	for _, c := range CoreCapabilities() {
		out[c] = true
	}
	return out
}
