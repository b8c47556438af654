// Package stream is the pure Redis Streams strategy of seed 003: every
// waiting job, due or not, is an entry of one stream read by one consumer
// group; XREADGROUP is the claim (blocking in Redis when the caller waits)
// and the pending entries list (PEL) holds the jobs in progress. It fixes the
// seed's flaws: an entry is acknowledged only when its job is finished (the
// seed acknowledged at claim time, so a crashed worker's job was lost),
// entries are never trimmed, every update after the claim is fenced by the
// lease token, and no script builds a key name.
//
// Keys (all under the queue's hash tag, ae:{queue}:...):
//
//	stream     STREAM entries {id: <job id>}; group "workers", one consumer per store instance
//	active     ZSET  "<id>|<token>" -> lease deadline ms (the lease index beside the PEL)
//	dead       ZSET  id -> dead-letter time ms
//	completed  STRING completion counter
//	expire     ZSET  id -> when a record CompleteMany finished may go (base's retire)
//	job:<id>   HASH or STRING (JSON) the job record; Ref is the job's entry id
//
// Scripts (base/lua/shared/stream_*.lua unless named here, all built on the
// shared library, whose stream section both stream backends use):
//
//	operation  script(s)                          round trips       complexity (B batch, A active, P pending, W waiting)
//	Enqueue    enqueue (lua/)                     1 per batch       O(B)
//	Claim      stream_claim                       1 per round       O(B (log A + log P)); a job read too early: see below
//	           (idle: XREADGROUP BLOCK,           +2 after a wait
//	           stream_activate)
//	Extend     extend                             1                 O(log A)
//	Complete   stream_complete                    1                 O(log A + log P)
//	CompleteMany stream_complete_many             1 per batch       O(B (log A + log P))
//	Fail       stream_fail                        1                 O(log A + log P)
//	Recover    ZRANGE, stream_recover,            2 to 4            O(B (log A + log P)) + the sweep's O(B log P)
//	           stream_peek, stream_sweep
//	Cancel     stream_cancel                      1                 O(log P)
//	Stats      XLEN, XPENDING, ZCARD, GET         1 (pipelined)     O(1)
//
// A claim is one call while entries wait: stream_claim runs XREADGROUP
// (without BLOCK, which a script may not use) and activates what it read,
// deriving the record keys from the stream key (base's package doc says
// why), so no entry it reads can be orphaned. Only a claim that found
// nothing blocks in XREADGROUP BLOCK and then activates what that read
// returned with stream_activate (one more call). A claim whose job was the
// last unread entry (base's drained) lets the store's next Claim block
// first, since its round would find nothing: at a low rate that saves an
// empty stream_claim per job (latency.yaml at 1000 jobs/s, 2026-11-26: 4.00
// FCALLs a job before, 3.12 after). Per claimed job the
// scripts run an HGETALL (the record as returned, with the claim's own
// fields laid over it in Go) and an HSET; the leases of a batch are one
// ZADD. A lease token ends in "@<entry id>", so Complete acknowledges and
// deletes the entry without reading the record's Ref; CompleteMany does so
// with one XACK and one XDEL per batch.
//
// Leases are kept on the store's clock, in the same active index (and with
// the same fencing) as every backend, beside the PEL: XAUTOCLAIM judges
// idleness by Redis's own clock, which a controlled clock cannot move, so
// Recover reads expired leases from the index instead and the backend
// declares store-clock-leases. A recovered job's entry is acknowledged and
// deleted and a new one appended (its Ref updated), rather than XCLAIMed to
// the recoverer: the recoverer is not a worker, and a fresh entry is
// readable by any claimer with ">" and wakes blocked ones. Extend is the
// shared heartbeat and leaves the PEL alone: nothing here reads idle times.
//
// Orphans: a claimer that crashes between XREADGROUP and stream_activate
// (or whose read reply is lost) leaves a pending entry with no lease. Recover
// also sweeps up to max pending entries per call, round-robin over the PEL;
// an entry seen unleased by two sweeps of the same store at least
// base.OrphanGrace (1s) apart is appended anew with its RetryCount
// unchanged (it never started). A claimer that activates late finds its Ref
// moved and drops the entry, so nothing runs twice: the grace only spares
// entries that are between a live claimer's read and its activation. It is
// measured on the store's clock, not as the PEL's idle time, so no path of
// this backend depends on Redis's clock, and a simulation on a controlled
// clock that never sleeps still brings orphans back. The price: the
// first-seen times live in the store that swept, so an orphan needs two
// sweeps by one store (a store that recovers once never confirms one; the
// harness's recoverer loop does).
//
// Delayed jobs: a stream has no place for them, so they are appended like
// any other (seed 003's way) and a claim that reads one before its RunAt
// never starts it: stream_activate acknowledges and deletes the entry and
// appends it again (Ref updated). A claim that found only such jobs reads
// on, 100 entries a round whatever its Max (a due job found past Max is
// re-appended too), until it has read up to the stream's tail as it was
// before its appends: every waiting entry looked at once, O(W) per pass.
// Then it pauses Options.PollInterval, or until the earliest RunAt it saw,
// or the end of its wait, before the next pass: it never spins, but every
// waiting claimer re-appends every delayed job once per pass, and a due job
// enqueued during a pause waits for it. That XADD/XACK/XDEL churn (and the
// Redis CPU it burns) is the cost the numbers should show; it is why this
// backend does not declare native-delay. Jobs in one claim's batch come
// back oldest RunAt first; across claims the order is stream order.
//
// Capabilities: blocking-claim (XREADGROUP BLOCK, bounded by the wait and
// the context deadline, on a connection of its own) and store-clock-leases.
// Not strict-fifo: concurrent claimers re-append delayed jobs in whatever
// order their scripts run, so jobs of equal RunAt can change places. Not
// exact-stats: telling due from delayed would mean reading every entry, so
// Stats counts all unread entries (XLEN minus pending) as Due, Delayed is 0,
// and InProgress is the pending count (leased jobs plus orphans not yet
// swept). No mover.
//
// The consumer name is per store instance ("c-" and random hex), not per
// ClaimRequest.WorkerID: the group would keep one consumer per worker id
// ever seen. The PEL's consumer column then says which store read an entry;
// the worker is in the record.
//
// Redis work per job (capacity.yaml's batched cell, claim and ack batches of
// 100, go-redis, Redis under callgrind), with base's changes of 2026-11-27
// (zset's package doc lists them and their shares): 7.21 commands and
// 277.0k instructions a job at c0ecb20, 5.28 and 227.5k at 99f4bec, and
// now 166.9k (median of three runs, 166.1k-170.7k; 180.5k before entries
// carried the claim's view, lib_stream.lua's stream_xadd): -40%, not the half
// issue 24 asks. Commands a job at speed in that cell: 4.3-4.4 (4.7 under
// callgrind, where more jobs are re-appended: a claim's clock reading
// precedes its script, so a job enqueued in between has a RunAt after the
// claim's now and goes back to the tail). Where the rest goes (a profile,
// per job, before the entries carried the view): XDEL about 35k (it finds
// each entry by scanning its listpack node from the start, and a job's
// entry is deleted on completion, or on a re-append), XREADGROUP about 11k
// (reading walks past the deleted entries), XACK about 5k, the records'
// HSETs about 13k. Not done: acknowledging without XDEL and trimming whole
// nodes (XTRIM MINID below the oldest pending entry), which needs Stats to
// count unread entries another way (the group's lag).
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
	return s.CancelWith(ctx, base.ScriptStreamCancel, id, []string{s.Ready})
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
	return jobstore.Stats{Due: n.Unread, InProgress: n.Pending, Dead: n.Dead, Completed: n.Completed}, nil
}
