// Package zset is the sorted-set strategy: every waiting job, due or
// delayed, sits in one ZSET scored by its RunAt in milliseconds, the layout
// of AsyncEndpoints and of seed 004, made crash-safe and race-free.
//
// Keys (all under the queue's hash tag, ae:{queue}:...):
//
//	queue      ZSET  Ref -> RunAt ms; Ref is "<seq 12 hex>:<id>" so equal RunAt keeps FIFO
//	seq        STRING counter behind Ref's sequence
//	active     ZSET  "<id>|<token>" -> lease deadline ms (the in-progress index)
//	dead       ZSET  id -> dead-letter time ms
//	completed  STRING completion counter
//	expire     ZSET  id -> when a record CompleteMany finished may go (base's retire)
//	wake       ZSET  wake-up marker for blocked claimers (wait "block" only)
//	waiters    ZSET  claimers blocked for work (hand-off, wait "block" only)
//	inbox:<b>  ZSET  one waiter's handed jobs, b its token base (hand-off)
//	job:<id>   HASH or STRING (JSON) the job record
//
// Scripts (lua/, each built on the shared library in backends/internal/base):
//
//	operation     script(s)                round trips  complexity (N queue size, B batch, A active)
//	Enqueue       enqueue                  1 per batch  O(B log N)
//	Claim         claim                    1 per batch  O(log N + B log A)
//	Extend        extend (shared)          1            O(log A)
//	Complete      complete (shared)        1            O(log A)
//	CompleteMany  complete_many (shared)   1 per batch  O(B log A)
//	Fail          fail                     1            O(log A + log N)
//	Recover       ZRANGE read, recover     2 per batch  O(B (log A + log N))
//	Cancel        cancel                   1            O(log N)
//	Stats         5 reads, pipelined       1            O(log N)
//
// Commands inside the scripts: Enqueue, per batch an INCRBY of seq (none
// when every job was handed to a waiter: lib.lua's seq_ref_of), one
// EXISTS of every record (a batch is all or nothing, and no hash write
// tells an existing record apart without overwriting it), one ZADD of all
// members, a wake (ZADD of the marker) when a job is due now, and a head
// read only when the batch's earliest job is delayed; per job an HSET.
// Claim, per batch a ZRANGE (of one due member more than it takes), one
// ZREM and one ZADD of all leases, a wake when that extra member says due
// jobs remain, and a head read only when it took nothing, or a full batch
// with nothing due after it; per job an HMGET of the four fields a worker
// needs (lib.lua's claim_view) and an HSET of Status and Lease. Unbatched
// (Max 1) from a backlog, a claim is thus five commands and a wake, where
// a head read after each pop (a ZRANGE WITHSCORES) had cost about 12,500
// instructions a claim more under callgrind (docs/results.md). Issue
// 24 asks for no wake unless a claimer waits; knowing that takes a waiter
// count in Redis, read by the same pop (a GET a job, about what the ZRANGE
// costs) and kept right when a claimer gives up its wait, so it is not
// done. Complete: ZREM, HSET, PEXPIRE, INCR;
// CompleteMany per batch one ZREM of every lease (records are read only
// when it removed fewer than it was sent), one INCRBY and one RPUSH to the
// expiry list (lib.lua's retire, plus a sweep of what is due), and per job
// an HSET.
//
// Its Redis work per job and the history of each cut: docs/results.md
// ("Measurements from the package docs").
//
// Claim is one call: it leases the jobs atomically (so claimers never race
// for the head job) and writes each record under the lease it holds, with
// the record keys derived from the queue key (base's package doc says why).
// The functions all live in one library loaded once per server (base).
//
// Waiting for work (option "wait"): "block", the default, is BullMQ's way: a
// claimer that finds nothing due blocks on BZPOPMIN of a marker ZSET
// (ae:{queue}:wake) until the queue's head falls due; enqueue, retry and
// recovery set the marker when they place a job due now or ahead of the
// head, and a pop that leaves due jobs behind passes it on (lib.lua's
// batch_wakes, zadd_wake and head_after_pop): at most one head read and
// one wake per batch. Redis times a blocked BZPOPMIN out on its hz tick, up
// to 100ms late at hz 10, so a claimer that blocks until a delayed head
// also arms the store's alarm (base's Core.WakeAt): at that RunAt the store
// sets the marker itself, and the claimer wakes within a millisecond or so.
// A claim that took a full batch and read the head as empty lets the
// store's next Claim block first (base's BlockClaim): its try would find
// nothing, and any write that makes work sets the marker, which ends the
// block at once. At a low rate that saves an empty claim script per job
// (docs/results.md).
//
// Hand-off (lib.lua's, base's Handoff; issue 24's waits). Woken
// by the marker, a claimer still needed a claim call: two trips after the
// enqueue where the floor's BLMOVE takes one, which put queue-wait p50 at
// 1.1-1.6x the floor's at 1000 jobs/s (latency.yaml, three repeats). Now a
// claim that finds nothing registers the claimer as a waiter in the same
// call (ae:{queue}:waiters: token base, max, lease, worker; scored by the
// end of its wait), and the claimer blocks on BZPOPMIN of its own inbox
// and the marker together. An enqueue that finds waiters and no job due
// in the queue (a due job goes first: strict FIFO) leases its due jobs to
// them in the same call, as a claim would (active index, Status and
// Lease), and puts them in the waiter's inbox as one member, which the
// blocked BZPOPMIN returns: one trip, as the floor. The waiter's next
// call, or the leave script when its wait or context ends, ends the
// registration and takes what was handed to it meanwhile (or, when an
// orphaned block popped the item, the item made again from its copy:
// base's TestHandoffDeadlineRace; a leave whose reply was lost is asked
// again: TestHandoffLeaveTwice), so a live claimer never strands a job. A registration lasts at most a
// second, and a handed job's lease is provisional (2s): a claimer that
// dies registered is handed jobs for a second at most, and Recover
// returns those no block popped, once their provisional lease ends, with
// no attempt spent (base's TestHandoffToDeadWaiter, issue 42). Its waits and costs against
// the floor's: docs/results.md.
// "poll" is the seeds' way: a waiting Claim pops every
// Options.PollInterval and the scripts touch no marker.
package zset

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptClaim   = base.NewScript("claim")
	scriptFail    = base.NewScript("fail")
	scriptRecover = base.NewScript("recover")
	scriptCancel  = base.NewScript("cancel")
)

//go:embed lua/*.lua
var scripts embed.FS

// Config holds the settings beyond jobstore.Options.
type Config struct {
	// Poll makes a waiting Claim poll (wait "poll") instead of blocking.
	Poll bool
}

// ParseConfig reads the registry's string options: "wait" is "block" or "poll".
func ParseConfig(extra map[string]string) (Config, error) {
	block, err := base.WaitOption("zset", extra)
	return Config{Poll: !block}, err
}

// Store is the sorted-set backend.
type Store struct {
	*base.Core
	queue string
	// marker is the wake-up marker's key, as a one-key list: empty when claims poll.
	marker []string
}

var (
	_ jobstore.Store          = (*Store)(nil)
	_ jobstore.BatchCompleter = (*Store)(nil)
)

// New returns a store whose claims block. It does not own c.
func New(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	return NewWith(ctx, c, o, Config{})
}

// NewWith loads the scripts and returns a store on c configured by cfg.
func NewWith(ctx context.Context, c rclient.Client, o jobstore.Options, cfg Config) (*Store, error) {
	core, err := base.NewCore(ctx, c, o, func(enc jobstore.Encoding) (base.Scripts, error) {
		return base.ComposeScripts(ctx, c, enc, scripts, base.ScriptExtend, base.ScriptComplete, base.ScriptCompleteMany, base.ScriptLocate)
	})
	if err != nil {
		return nil, fmt.Errorf("zset: %w", err)
	}
	s := &Store{Core: core, queue: core.Keys.Queue()}
	if !cfg.Poll {
		s.marker = []string{core.Keys.Wake()}
	}
	return s, nil
}

// Capabilities: everything but a mover; blocking-claim unless claims poll.
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapNativeDelay: true, jobstore.CapStoreClockLeases: true,
		jobstore.CapStrictFIFO: true, jobstore.CapExactStats: true, jobstore.CapBlockingClaim: len(s.marker) > 0,
		jobstore.CapBatchComplete: true}.WithCore()
}

// Enqueue stores jobs atomically.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := s.Check(); err != nil {
		return err
	}
	now := s.Now()
	_, args, _, err := s.EnqueueArgs(now, jobs)
	if err != nil {
		return err
	}
	blocks := "0"
	if len(s.marker) > 0 {
		blocks = "1"
	}
	args = append([]string{base.Ms(now), blocks}, args...)
	_, err = s.Run(ctx, base.ScriptEnqueue, []string{s.queue}, args)
	return err
}

// Claim pops and activates due jobs in one call, blocking on the wake-up
// marker (or polling) while req.Wait allows.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.WaitClaim(ctx, req, s.marker, func(now, deadline time.Time, h base.Handoff) ([]jobstore.Claimed, time.Time, error) {
		args := []string{base.Ms(now), strconv.Itoa(req.Max), base.Ms(deadline), s.TokenBase(), req.WorkerID}
		if len(s.marker) > 0 {
			args = append(args, h.Args()...)
		}
		v, err := s.Run(ctx, scriptClaim, []string{s.queue}, args)
		if err != nil {
			return nil, time.Time{}, err
		}
		got, head, err := base.DecodeClaimReply(v, req.WorkerID, now, deadline)
		if err != nil {
			return got, time.Time{}, fmt.Errorf("zset: %w", err)
		}
		if h, read := head.(string); len(got) == req.Max && read && h == "" {
			s.NoteEmptied() // the script read the head after a full batch: none left
		}
		return got, base.NextDue(head), nil
	})
}

// Fail retries with backoff or dead-letters.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.FailWith(ctx, scriptFail, l, reason, func(_ time.Time) []string { return append([]string{s.queue}, s.marker...) })
}

// Recover takes back jobs whose lease expired.
func (s *Store) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	return s.RecoverWith(ctx, scriptRecover, max, append([]string{s.queue}, s.marker...))
}

// Cancel cancels a waiting job.
func (s *Store) Cancel(ctx context.Context, id string) error {
	return s.CancelWith(ctx, scriptCancel, id, []string{s.queue})
}

// Stats counts the queue in one round trip.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.Check(); err != nil {
		return jobstore.Stats{}, err
	}
	now := base.Ms(s.Now())
	rs := s.C.DoMulti(ctx,
		rclient.Cmd("ZCOUNT", s.queue, "-inf", now),
		rclient.Cmd("ZCOUNT", s.queue, "("+now, "+inf"),
		rclient.Cmd("ZCARD", s.Keys.Active()),
		rclient.Cmd("ZCARD", s.Keys.Dead()),
		rclient.Cmd("GET", s.Keys.Completed()))
	var n [5]int64
	for i, r := range rs {
		if r.Err != nil {
			return jobstore.Stats{}, fmt.Errorf("zset: stats: %w", r.Err)
		}
		n[i] = base.Int(r.Val)
	}
	return jobstore.Stats{Due: n[0], Delayed: n[1], InProgress: n[2], Dead: n[3], Completed: n[4]}, nil
}

// Census is the queue's key census (jobstore.Censuser).
func (s *Store) Census(ctx context.Context) (jobstore.Census, error) {
	return s.TakeCensus(ctx, base.CensusSpec{Locate: s.Locate})
}

// Locate says where each job's record sits (jobstore.Locator): waiting in
// the queue ZSET, or leased in the active index.
func (s *Store) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	return s.LocateIn(ctx, ids, s.queue)
}
