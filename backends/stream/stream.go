// Package stream is the pure Redis Streams strategy of seed 003: every
// waiting job, due or not, is an entry of one stream read by one consumer
// group, and XREADGROUP is the claim (a claimer that waits blocks in
// Redis, on its inbox and a wake marker: see the hand-off below). It fixes the seed's flaws: a job is leased (active index) in the
// same atomic call that reads its entry (the seed acknowledged at claim
// time with nothing else covering the job, so a crashed worker's job was
// lost), entries are never trimmed before the group has read them, every
// update after the claim is fenced by the lease token, and no script
// builds a key name.
//
// Keys (all under the queue's hash tag, ae:{queue}:...):
//
//	stream     STREAM entries {id, at, p, x} (lib_stream.lua's stream_xadd); group "workers", one consumer per store instance
//	voided     SET   unread entries whose jobs were canceled (the claim skips them)
//	active     ZSET  "<id>|<token>" -> lease deadline ms (the lease index)
//	dead       ZSET  id -> dead-letter time ms
//	completed  STRING completion counter
//	expiring   LIST  "<at>|<id>|<id>..." of the records CompleteMany finished (base's expiry list)
//	wake       ZSET  wake-up marker for blocked claimers
//	waiters    ZSET  claimers blocked for work; inbox:<b> a waiter's handed jobs (zset's hand-off)
//	job:<id>   HASH or STRING (JSON) the job record; Ref is the job's entry id
//
// Scripts (base/lua/shared/ unless named here, all built on the shared
// library, whose stream part, lib_stream.lua, both stream backends use):
//
//	operation  script(s)                          round trips       complexity (B batch, A active, P pending, W waiting)
//	Enqueue    enqueue (lua/)                     1 per batch       O(B)
//	Claim      stream_claim                       1 per round       O(B log A); a job read too early: see below
//	           (idle: BZPOPMIN of its inbox       +1 after a wait
//	           and the marker; after a drain
//	           stream_join first)
//	Extend     extend                             1                 O(log A)
//	Complete   complete                           1                 O(log A)
//	CompleteMany complete_many                    1 per batch       O(B log A)
//	Fail       stream_fail                        1                 O(log A)
//	Recover    ZRANGE, stream_recover,            2 to 4            O(B log A) + the sweep's O(B log P)
//	           stream_peek, stream_sweep
//	Cancel     stream_cancel                      1                 O(log P)
//	Stats      XLEN, XPENDING, XINFO GROUPS,      1 (pipelined)     O(1)
//	           SCARD, 2 ZCARD, GET
//
// A claim is one call while entries wait: stream_claim runs XREADGROUP
// NOACK (without BLOCK, which a script may not use) and leases what it
// read, deriving the record keys from the stream key (base's package doc
// says why). The read and the leases are one atomic call, so no entry it
// reads can be orphaned and none needs to stay pending: from the claim on,
// the lease covers the job, as in every backend. A claim that found
// nothing registers the claimer as a waiter in the same call and blocks
// on BZPOPMIN of its inbox and the marker ae:{queue}:wake (zset's
// hand-off, its package doc): an enqueue that finds waiters and no unread
// entry leases its due jobs to them (an empty Ref: in no stream) and the
// block returns them, one trip after the enqueue as the floor's BLMOVE;
// a job appended while anyone waits sets the marker (lib_stream.lua's
// stream_wake), and the woken claimer reads it with stream_claim. Before the hand-off the idle
// claimer blocked in XREADGROUP BLOCK and leased what it read with
// stream_activate, one more call (docs/results.md). The seed variants keep that blocking read
// (stream_activate, entries pending until it acknowledges them), and a
// variant's claim whose job was the last unread entry (base's drained)
// lets its store's next Claim block first. With the hand-off a
// claimer must register in a call that sees nothing unread: an entry
// appended while no one waited set no marker. So the next Claim after a
// drain or a hand-off joins first with stream_join, which registers only
// when the stream holds nothing unread (and, for dual, nothing due in the
// delayed ZSET) and else sends the claimer to stream_claim (base's
// TestHandoffJoinFirstSeesJobBetween). An entry carries the claim's view (RunAt, payload,
// retries and name), so a claim that reads entries in its own script reads
// no record: per claimed job it runs one HSET, and the leases of a batch
// are one ZADD. Complete and CompleteMany are the shared ones: a finished
// job's entry needs nothing.
//
// Entries are not deleted one by one (XDEL was about 35,000 instructions a
// job, more than the rest of a job's stream work together: it scans the
// listpack node to the entry and rewrites it): every claim trims the whole
// nodes of entries the group has read that no pending entry precedes
// (XTRIM MINID ~, lib_stream.lua's stream_trim). The stream therefore holds
// about a node of read entries besides the unread ones, plus, while an
// orphan waits for the sweep, every entry after it. Stats counts the unread
// by the group's lag, not by XLEN. A job canceled while its entry is
// unread has the entry voided, not deleted (an XDEL ahead of the group
// leaves Redis unable to tell the lag), and the claim that reads it skips
// it.
//
// Leases are kept on the store's clock, in the same active index (and with
// the same fencing) as every backend: XAUTOCLAIM judges idleness by Redis's
// own clock, which a controlled clock cannot move, so Recover reads expired
// leases from the index instead and the backend declares
// store-clock-leases. A recovered job gets a new entry (its Ref updated),
// rather than being XCLAIMed to the recoverer: the recoverer is not a
// worker, and a fresh entry is readable by any claimer with ">" and wakes
// blocked ones. Extend is the shared heartbeat.
//
// Orphans: a claimer that crashes between a blocking XREADGROUP and
// stream_activate (or whose read reply is lost) leaves a pending entry
// with no lease. Recover also sweeps up to max pending entries per call,
// round-robin over the PEL; an entry seen unleased by two sweeps of the
// same store at least base.OrphanGrace (1s) apart is acknowledged and
// appended anew with its RetryCount unchanged (it never started). A
// claimer that activates late finds its Ref moved and passes the entry, so
// nothing runs twice: the grace only spares entries that are between a
// live claimer's read and its activation. It is measured on the store's
// clock, not as the PEL's idle time, so no path of this backend depends on
// Redis's clock, and a simulation on a controlled clock that never sleeps
// still brings orphans back. The price: the first-seen times live in the
// store that swept, so an orphan needs two sweeps by one store (a store
// that recovers once never confirms one; the harness's recoverer loop
// does).
//
// Delayed jobs: a stream has no place for them, so they are appended like
// any other (seed 003's way) and a claim that reads one before its RunAt
// never starts it: a new entry is appended for it (Ref updated), from the
// fields of the entry read, without reading the record. A claim
// that found only such jobs reads on, 100 entries a round whatever its Max
// (a due job found past Max is re-appended too), until it has read up to
// the stream's tail as it was before its appends: every waiting entry
// looked at once, O(W) per pass. Then it pauses Options.PollInterval, or
// until the earliest RunAt it saw, or the end of its wait, before the next
// pass: it never spins, but every waiting claimer re-appends every delayed
// job once per pass, and a due job enqueued during a pause waits for it.
// That XADD churn (and the Redis CPU it burns) is the cost the numbers
// should show; it is why this backend does not declare native-delay. Jobs
// in one claim's batch come back oldest RunAt first; across claims the
// order is stream order.
//
// Capabilities: blocking-claim (BZPOPMIN, bounded by the wait and the
// context deadline, on a connection of its own) and store-clock-leases.
// Not strict-fifo: concurrent claimers re-append delayed jobs in whatever
// order their scripts run, so jobs of equal RunAt can change places. Not
// exact-stats: telling due from delayed would mean reading every entry, so
// Stats counts all unread entries (base.StreamCounts.Unread) as Due,
// Delayed is 0, and InProgress is the leases plus the pending entries
// (read by a blocking claim not yet leased, or orphans not yet swept). No
// mover.
//
// The consumer name is per store instance ("c-" and random hex), not per
// ClaimRequest.WorkerID: the group would keep one consumer per worker id
// ever seen. The PEL's consumer column then says which store read an entry;
// the worker is in the record.
//
// Its Redis work per job and its history: docs/results.md ("Measurements
// from the package docs"). A job enqueued between a claim's clock reading
// and its script has a RunAt after the claim's now and goes back to the
// tail.
package stream

import (
	"context"
	"embed"
	"fmt"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

//go:embed lua/*.lua
var scripts embed.FS

// Store is the stream backend.
type Store struct {
	*base.Stream
}

var (
	_ jobstore.Store          = (*Store)(nil)
	_ jobstore.BatchCompleter = (*Store)(nil)
)

// New loads the scripts, creates the consumer group when missing and returns
// a store on c. It does not own c.
func New(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	s, err := base.NewStream(ctx, c, o, scripts, nil)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	s.Marker = s.Keys.Wake()
	return &Store{Stream: s}, nil
}

// Capabilities: a blocking claim and leases on the store's clock.
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapBlockingClaim: true, jobstore.CapStoreClockLeases: true,
		jobstore.CapBatchComplete: true}.WithCore()
}

// Claim reads and activates due jobs, blocking in Redis while req.Wait allows.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.Stream.Claim(ctx, req, 0)
}

// Cancel cancels a waiting job and deletes its entry.
func (s *Store) Cancel(ctx context.Context, id string) error {
	return s.CancelIn(ctx, id)
}

// Stats counts the queue in one round trip; see the package doc for what
// Due means here.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.Check(); err != nil {
		return jobstore.Stats{}, err
	}
	n, err := s.Counts(ctx)
	if err != nil {
		return jobstore.Stats{}, fmt.Errorf("stream: %w", err)
	}
	return jobstore.Stats{Due: n.Unread, InProgress: n.Leased + n.Pending, Dead: n.Dead, Completed: n.Completed}, nil
}
