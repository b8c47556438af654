// Package dual is seed 000's recommended dual queue: delayed jobs wait in a
// ZSET scored by RunAt, ready jobs in a stream read by one consumer group,
// and a mover promotes jobs from the one to the other when they fall due.
// The mover runs inside Claim (the seed's approach 1, the default) or as a
// background loop that calls Promote (approach 2); Option "mover" chooses.
// Claim, leases, fencing, recovery and the orphan sweep are the stream
// backend's (backends/internal/base/stream.go): see package stream for the
// design decisions they share.
//
// It fixes the seed's mover: the seed read due ids, then removed and re-added
// each in separate commands, so two movers could promote a job twice and a
// crash between the steps dropped it. Here a plain read finds the due
// members, then one script (record keys derived from the stream key, see
// base's package doc) does per member ZSCORE (still due?), ZREM (the one
// winner among movers) and XADD with the record's Ref moved to the new
// entry, atomically.
//
// Keys (all under the queue's hash tag, ae:{queue}:...):
//
//	stream     STREAM entries {id, at, p, x} of due jobs (lib_stream.lua's stream_xadd); group "workers", one consumer per store instance
//	voided     SET   unread entries whose jobs were canceled (the claim skips them)
//	wake       ZSET  wake-up marker for blocked claimers
//	waiters    ZSET  claimers blocked for work; inbox:<b> a waiter's handed jobs (zset's hand-off)
//	delayed    ZSET  "<seq 12 hex>:<id>" -> RunAt ms (jobs not yet due)
//	seq        STRING counter behind the delayed members' sequence
//	active     ZSET  "<id>|<token>" -> lease deadline ms (the lease index)
//	dead       ZSET  id -> dead-letter time ms
//	completed  STRING completion counter
//	expiring   LIST  "<at>|<id>|<id>..." of the records CompleteMany finished (base's expiry list)
//	job:<id>   HASH or STRING (JSON) the job record; Ref is its entry id or delayed member
//
// Scripts (lua/ for enqueue and promote, base/lua/shared/stream_*.lua for the rest):
//
//	operation  script(s)                             round trips        complexity (B batch, N delayed, A active, P pending)
//	Enqueue    enqueue                               1 per batch        O(B log N)
//	Claim      stream_claim (promotes first in       1 per round        O(B log A), promotion O(B log N)
//	           claim mode); idle: BZPOPMIN of its    (+1 after a wait)
//	           inbox and the marker
//	Promote    2 ZRANGE pipelined, promote           1-2                O(B log N)
//	Extend     extend                                1                  O(log A)
//	Complete   complete                              1                  O(log A)
//	CompleteMany complete_many                       1 per batch        O(B log A)
//	Fail       stream_fail                           1                  O(log A + log N)
//	Recover    ZRANGE, stream_recover,               2 to 4             O(B log A) + the sweep's O(B log P)
//	           stream_peek, stream_sweep
//	Cancel     stream_cancel                         1                  O(log N + log P)
//	Stats      XLEN, XPENDING, XINFO GROUPS, SCARD,  1 (pipelined)      O(log N)
//	           2 ZCOUNT, 2 ZCARD, GET
//
// Placement (stream_place in base's lib_stream.lua), for Enqueue, Fail and
// Recover alike: a job not yet due goes into the delayed ZSET, a due one
// straight into the stream, unless a delayed job of exactly the same RunAt
// still waits for promotion: then it queues behind that one in the ZSET, so
// equal RunAt keeps enqueue order (strict-fifo by design, not by luck:
// members of equal score sort by their sequence, promotion takes them
// oldest first, and a mover can only read a member once every member ahead
// of it has been promoted in an earlier atomic call). Oldest RunAt first
// holds within one claim's batch; a job promoted late (the mover's lag)
// queues behind jobs appended meanwhile with a later RunAt.
//
// Mover modes. "claim": every Claim round first promotes up to Option
// "batch" due jobs in the same call as the read and the activation
// (stream_claim, record keys derived: see base's package doc), and a
// blocked claimer waits no longer than the next delayed RunAt, so no loop is
// needed. Redis would time that block out on its hz tick (up to 100ms late
// at hz 10), so the claimer also arms the store's alarm (base's
// Core.WakeAt): at that RunAt the store promotes, and the XADD wakes the
// blocked claimer at once.
//
// Blocking (issue 24's waits): an idle dual claimer no longer
// blocks in XREADGROUP BLOCK, whose entries then needed a second call
// (stream_activate) to be leased: two trips after the enqueue, where the
// floor takes one. Its claim call that reads nothing registers it as a
// waiter, and it blocks on BZPOPMIN of its inbox and the marker
// ae:{queue}:wake, zset's hand-off (zset's package doc): an enqueue that
// finds waiters, nothing unread in the stream and nothing due in the
// delayed ZSET leases its due jobs to them (an empty Ref: in no stream), and the
// block returns them. Every script that appends a due entry (enqueue,
// promote, fail, recover, the orphan sweep) sets the marker when anyone
// waits (lib_stream.lua's stream_wake: one EXISTS a call otherwise). Its waits against the floor's:
// docs/results.md. Package stream keeps
// XREADGROUP BLOCK. The seed variant keeps its own polling claim.
//
// Mover mode "background": Claim never promotes;
// due jobs stay in the ZSET until something calls Promote (the harness in a
// loop, the conformance suite before each claim), and the mover's XADD wakes
// blocked claimers. Both modes implement jobstore.Mover.
//
// Capabilities: blocking-claim, native-delay (a delayed job costs nothing
// until due), store-clock-leases, strict-fifo, exact-stats (Due = unread
// entries, base.StreamCounts.Unread, + delayed members due by now; Delayed
// = the rest of the ZSET; InProgress = the leases plus the pending entries,
// read by a blocking claim not yet leased or orphans not yet swept), mover.
//
// Its Redis work per job and its history: docs/results.md ("Measurements
// from the package docs").
package dual

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptPromote = base.NewScript("promote")
)

//go:embed lua/*.lua
var scripts embed.FS

// Option names, as the registry passes them, and the mover modes (base's,
// shared by every backend that has a mover).
const (
	OptionMover = base.OptionMover
	OptionBatch = "batch"
	// MoverClaim promotes inside every Claim round (seed 000, approach 1). The default.
	MoverClaim = base.MoverClaim
	// MoverBackground leaves promotion to whoever calls Promote in a loop
	// (seed 000, approach 2).
	MoverBackground = base.MoverBackground
)

// DefaultBatch is how many due jobs a claim-mode Claim promotes per round.
const DefaultBatch = 100

// Config holds dual's own settings; zero values mean the defaults.
type Config struct {
	Mover string // MoverClaim (the default when empty) or MoverBackground
	Batch int    // promotions per claim round in claim mode, 1 to base.MaxClaim; default DefaultBatch
}

// ParseConfig reads settings given as strings (scenario files, the
// registry): "mover" is "claim" or "background", "batch" a whole number from
// 1 to 1000. A bad value is an ErrInvalid error naming the key and what is
// allowed; keys it does not know are left to the caller.
func ParseConfig(extra map[string]string) (Config, error) {
	var c Config
	var err error
	if c.Mover, err = base.MoverOption("dual", extra); err != nil {
		return c, err
	}
	if v, ok := extra[OptionBatch]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > base.MaxClaim {
			return c, fmt.Errorf("%w: backend dual: option %s %q: allowed is a whole number from 1 to %d", jobstore.ErrInvalid, OptionBatch, v, base.MaxClaim)
		}
		c.Batch = n
	}
	return c, nil
}

func (c Config) withDefaults() (Config, error) {
	claimMoves, err := base.ClaimMoves("dual", c.Mover)
	if err != nil {
		return c, err
	}
	c.Mover = MoverBackground
	if claimMoves {
		c.Mover = MoverClaim
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Batch < 1 || c.Batch > base.MaxClaim {
		return c, fmt.Errorf("%w: backend dual: Config.Batch %d: allowed is 1 to %d", jobstore.ErrInvalid, c.Batch, base.MaxClaim)
	}
	return c, nil
}

// Store is the dual-queue backend.
type Store struct {
	*base.Stream
	cfg     Config
	delayed string
}

var (
	_ jobstore.Store          = (*Store)(nil)
	_ jobstore.Mover          = (*Store)(nil)
	_ jobstore.BatchCompleter = (*Store)(nil)
)

// New returns a store with the default Config (mover in Claim).
func New(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	return NewWith(ctx, c, o, Config{})
}

// NewWith loads the scripts, creates the consumer group when missing and
// returns a store on c. It does not own c.
func NewWith(ctx context.Context, c rclient.Client, o jobstore.Options, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := base.NewStream(ctx, c, o, scripts, func(k keys.Keys) []string { return []string{k.Delayed(), k.Seq()} })
	if err != nil {
		return nil, fmt.Errorf("dual: %w", err)
	}
	st := &Store{Stream: s, cfg: cfg, delayed: s.Keys.Delayed()}
	st.Marker = s.Keys.Wake()
	if cfg.Mover == MoverClaim {
		st.OnDue = func(ctx context.Context) { _, _, _ = st.promote(ctx, cfg.Batch) }
	}
	return st, nil
}

// Capabilities: everything; see the package doc.
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapBlockingClaim: true, jobstore.CapNativeDelay: true,
		jobstore.CapStoreClockLeases: true, jobstore.CapStrictFIFO: true, jobstore.CapExactStats: true,
		jobstore.CapMover: true, jobstore.CapMoverLoop: s.cfg.Mover == MoverBackground, jobstore.CapBatchComplete: true}.WithCore()
}

// Config is the store's effective configuration.
func (s *Store) Config() Config { return s.cfg }

// Claim reads and activates due jobs, blocking in Redis while req.Wait
// allows; in claim mode each round first promotes due delayed jobs, in the
// same call.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	if s.cfg.Mover == MoverBackground {
		return s.Stream.Claim(ctx, req, 0)
	}
	return s.Stream.Claim(ctx, req, s.cfg.Batch)
}

// Promote moves up to max due jobs from the delayed ZSET into the stream
// and reports how many it moved (jobstore.Mover). Any number of movers may
// run at once: each job is promoted exactly once.
func (s *Store) Promote(ctx context.Context, max int) (int, error) {
	if max <= 0 || max > base.MaxClaim {
		return 0, fmt.Errorf("%w: Promote max %d: allowed is 1 to %d", jobstore.ErrInvalid, max, base.MaxClaim)
	}
	if err := s.Check(); err != nil {
		return 0, err
	}
	n, _, err := s.promote(ctx, max)
	return n, err
}

// promote reads up to max due members and the first member not yet due in
// one round trip, then moves the due ones with the promote script. It
// returns how many it moved and when the next delayed job falls due (zero
// when none waits).
func (s *Store) promote(ctx context.Context, max int) (int, time.Time, error) {
	now := base.Ms(s.Now())
	rs := s.C.DoMulti(ctx,
		rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{s.delayed},
			Args: []string{"-inf", now, "BYSCORE", "LIMIT", "0", strconv.Itoa(max)}},
		rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{s.delayed},
			Args: []string{"(" + now, "+inf", "BYSCORE", "LIMIT", "0", "1", "WITHSCORES"}})
	for _, r := range rs {
		if r.Err != nil {
			return 0, time.Time{}, fmt.Errorf("dual: promote: read delayed: %w", r.Err)
		}
	}
	next := nextDue(rs[1].Val)
	members := base.Strings(rs[0].Val)
	if len(members) == 0 {
		return 0, next, nil
	}
	v, err := s.Run(ctx, scriptPromote, []string{s.delayed, s.Ready}, append([]string{now}, members...))
	if err != nil {
		return 0, next, fmt.Errorf("dual: %w", err)
	}
	return int(base.Int(v)), next, nil
}

// nextDue reads the score of a ZRANGE ... LIMIT 0 1 WITHSCORES reply:
// [[member, score]] in RESP3, [member, score] in RESP2.
func nextDue(v any) time.Time {
	arr, _ := v.([]any)
	if len(arr) == 1 {
		arr, _ = arr[0].([]any)
	}
	if len(arr) != 2 {
		return time.Time{}
	}
	switch sc := arr[1].(type) {
	case float64:
		return time.UnixMilli(int64(sc))
	case string:
		if f, err := strconv.ParseFloat(sc, 64); err == nil {
			return time.UnixMilli(int64(f))
		}
	}
	return time.Time{}
}

// Cancel cancels a waiting job and removes its entry or delayed member.
func (s *Store) Cancel(ctx context.Context, id string) error {
	return s.CancelIn(ctx, id, s.delayed)
}

// Stats counts the queue exactly, in one round trip.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.Check(); err != nil {
		return jobstore.Stats{}, err
	}
	now := base.Ms(s.Now())
	n, err := s.Counts(ctx, rclient.Cmd("ZCOUNT", s.delayed, "-inf", now), rclient.Cmd("ZCOUNT", s.delayed, "("+now, "+inf"))
	if err != nil {
		return jobstore.Stats{}, fmt.Errorf("dual: %w", err)
	}
	return jobstore.Stats{Due: n.Unread + n.Extra[0], Delayed: n.Extra[1], InProgress: n.Leased + n.Pending,
		Dead: n.Dead, Completed: n.Completed}, nil
}
