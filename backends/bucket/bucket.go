// Package bucket is the time-bucket strategy (seed 000, approach 3): a job
// due now waits in a ready ZSET; a delayed job waits in the bucket of its
// RunAt window (a HASH, width Config.Width, default 1s), and a mover promotes
// the due jobs of due buckets into ready. A delayed Enqueue costs O(1) in its
// bucket plus O(log B) in the bucket index, whatever the number of delayed
// jobs; the price is paid when a bucket falls due, since the mover reads it
// whole on each visit. The seed's flaws are fixed: a job whose bucket is due
// but whose own RunAt is not stays in its bucket (the seed started the whole
// bucket early), and one atomic script moves each job exactly once (the
// seed read, re-added and deleted in separate commands, so two movers could
// both promote a job and a crash could drop one).
//
// Keys (all under the queue's hash tag, ae:{queue}:...):
//
//	ready           ZSET  member -> RunAt ms: due jobs; member is "<seq 12 hex>:<id>"
//	bucket:<start>  HASH  member -> RunAt ms: delayed jobs whose RunAt is in [start, start+width)
//	buckets         ZSET  bucket key -> earliest RunAt it holds (a lower bound after a Cancel)
//	bucketed        STRING number of jobs in buckets (for Stats)
//	seq             STRING counter behind the members' sequence
//	active          ZSET  "<id>|<token>" -> lease deadline ms (the in-progress index)
//	dead            ZSET  id -> dead-letter time ms
//	completed       STRING completion counter
//	expire          ZSET  id -> when a record CompleteMany finished may go (base's retire)
//	wake            ZSET  wake-up marker for blocked claimers (wait "block" only)
//	waiters         ZSET  claimers blocked for work; inbox:<b> a waiter's handed jobs (zset's hand-off)
//	job:<id>        HASH or STRING (JSON) the job record; Ref is "<key of its place>|<member>"
//
// Scripts (lua/, each built on the shared library in backends/internal/base):
//
//	operation          script(s)                    round trips     complexity (R ready, B buckets, b a bucket's size, k batch, A active)
//	Enqueue            enqueue                      1 per batch     O(k log R) due, O(k log B) delayed
//	Claim, mover=claim move, [move...]              1; 2 when due   O(log R + k log A), plus Promote's cost when a bucket is due (at most 4 extra moves)
//	Claim, background  move                         1               O(log R + k log A)
//	Promote            ZRANGE read, move            2 per batch     O(log B + Σ b + d log d + d log R), d moved
//	Extend             extend (shared)              1               O(log A)
//	Complete           complete (shared)            1               O(log A)
//	CompleteMany       complete_many (shared)       1 per batch     O(k log A)
//	Fail               fail                         1               O(log A + log B)
//	Recover            ZRANGE read, recover         2 per batch     O(k (log A + log R))
//	Cancel             record read, cancel          2               O(log R) or O(1) + O(log B)
//	Stats              ZRANGE read, stats           2               O(log B + Σ b of due buckets + log R)
//
// Wait "block" adds O(log R + log B) per Enqueue batch whose earliest job
// is delayed (a batch with a job due now only wakes), per Fail, and per
// move that took nothing or a full batch (see Waiting for work below); the
// round trips are the same. A move activates the jobs it leased in the same
// call (HGETALL and HSET per job; the record keys derived from the ready
// key, see base's package doc), as zset's claim does.
//
// Design choices:
//   - Deviation from the brief's guidance: the bucket index is scored by the
//     earliest RunAt a bucket holds, not by the bucket's start. With the
//     start, a bucket whose jobs all lie late in its window looks due for the
//     whole window and every mover pass reads it for nothing; with the
//     earliest RunAt a bucket is read only when at least one of its jobs is
//     due. ZADD LT on insert and the mover's rescoring of each bucket it
//     visits keep it exact (a Cancel may leave it early, which costs one
//     visit and never a late job). The key still names the window's start.
//   - Ready is a ZSET scored by RunAt, not a LIST: a job enqueued with a
//     RunAt in the past goes straight to ready and must still be claimed
//     before later ones (oldest RunAt first), which a LIST cannot do. Ready
//     holds due jobs only, so R is the backlog, not the schedule.
//   - A bucket is a HASH, as in the seed: O(1) to add to, but a visit reads
//     it whole (HGETALL) and sorts its due jobs in Lua. A bucket that falls
//     due with b jobs, promoted max at a time, is read b/max times: choose
//     the width so that a bucket holds about what one Promote moves.
//   - A retry (Fail) always goes into the bucket of its RunAt, a recovered
//     job (due at once) straight into ready.
//
// Claim pops only ready jobs scored strictly below the lowest bucket score,
// so it never overtakes a due job still in a bucket: with mover "claim" it
// then promotes those buckets itself (one more round trip) and pops again;
// with mover "background" it leaves them to the mover (Promote), as the
// contract allows, and returns only what comes before them: FIFO over
// liveness, so there claims of newer jobs wait on the mover. Pop, lease
// grant and activation are one script (lib.lua's pop_leases and
// activate_all).
//
// Waiting for work (option "wait"): "block", the default, is zset's way
// (BullMQ's marker, base's BlockClaim and lib.lua's wake pieces): a claimer
// that finds nothing blocks on BZPOPMIN of ae:{queue}:wake, no longer than
// until the earlier of ready's head and the lowest bucket score that the
// move script reports (with mover "background", a bucket already due and the
// ready jobs behind it are left to the mover's wake instead, so claimers do
// not spin until it comes). The marker is set by whoever places work ahead
// of that: Enqueue of a due job, or of a delayed one into a bucket scored
// below the head (lib.lua's ahead); a Fail whose retry lands there; Recover;
// a move (Claim's or Promote's) that leaves work due now; and a Cancel that
// empties a due bucket (it may have held ready jobs back). The cost: per
// Enqueue batch at most one ZADD of the marker, plus one read each of
// ready's head and the index's head when no job of the batch is due now;
// per retry the same two reads and at most one ZADD; per Recover call at
// most one ZADD; per move that took nothing or a full batch one more head
// read and a ZADD when work is left due. A claimer that blocks until a
// head in the future arms the store's alarm (base's Core.WakeAt), which
// sets the marker at that instant: Redis alone would time the BZPOPMIN out
// on its hz tick, up to 100ms late at hz 10. A claimer that blocks is
// registered as a waiter by the move that found nothing, and an enqueue
// hands it due jobs leased, returned by its blocked BZPOPMIN, when nothing
// due waits in ready or a due bucket: zset's hand-off (its package doc;
// measured waits in docs/results.md).
// "poll" is the seeds' way: a waiting Claim
// moves every Options.PollInterval, and no script reads heads for waking or
// touches the marker, which is then not in KEYS.
//
// Capabilities: store-clock-leases, strict-fifo (the pop bound above), exact-stats
// (Stats counts the due jobs of due buckets one by one), mover, and
// blocking-claim unless claims poll. Not native-delay: a bucket that is
// partly due is read whole, not-yet-due jobs included, on every mover
// visit; the width bounds that cost.
//
// Enqueue gathers its writes by key: one ZADD of ready and one HSET per
// bucket a batch. Its Redis work per job: docs/results.md ("Measurements
// from the package docs").
package bucket

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptMove    = base.NewScript("move")
	scriptFail    = base.NewScript("fail")
	scriptRecover = base.NewScript("recover")
	scriptCancel  = base.NewScript("cancel")
	scriptStats   = base.NewScript("stats")
)

//go:embed lua/*.lua
var scripts embed.FS

// Option names, as the registry passes them, and the mover modes (base's,
// shared by every backend that has a mover).
const (
	OptionWidth = "width"
	OptionMover = base.OptionMover
	OptionWait  = base.OptionWait
	// MoverClaim: Claim promotes the due buckets that hold older jobs before popping. The default.
	MoverClaim = base.MoverClaim
	// MoverBackground: promotion is left to a loop calling Promote.
	MoverBackground = base.MoverBackground
)

// DefaultWidth is the default bucket width.
const DefaultWidth = time.Second

// Claim tuning: how many due buckets one claim round promotes from, and how
// many promote-and-pop rounds one Claim makes at most.
const (
	claimBuckets = 64
	claimRounds  = 4
	// statsTries bounds Stats' re-reads when buckets keep falling due
	// between its two round trips.
	statsTries = 5
	// cancelTries bounds Cancel's re-reads of a job that keeps moving.
	cancelTries = 5
)

// Config holds the options only this backend takes.
type Config struct {
	// Width of a bucket's RunAt window: at least 1ms, whole milliseconds. Zero means DefaultWidth.
	Width time.Duration
	// Mover is MoverClaim (the default when empty) or MoverBackground.
	Mover string
	// Poll makes a waiting Claim poll (wait "poll") instead of blocking.
	Poll bool
}

// ParseConfig reads the registry's string options (keys OptionWidth,
// OptionMover and OptionWait, "block" or "poll"; an unknown key is the
// registry's to refuse).
func ParseConfig(extra map[string]string) (Config, error) {
	var cfg Config
	if v, ok := extra[OptionWidth]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || checkWidth(d) != nil {
			return cfg, widthError(v)
		}
		cfg.Width = d
	}
	var err error
	if cfg.Mover, err = base.MoverOption("bucket", extra); err != nil {
		return cfg, err
	}
	block, err := base.WaitOption("bucket", extra)
	cfg.Poll = !block
	return cfg, err
}

func checkWidth(d time.Duration) error {
	if d < time.Millisecond || d%time.Millisecond != 0 {
		return widthError(d.String())
	}
	return nil
}

func widthError(v string) error {
	return fmt.Errorf("%w: backend bucket: option %s %q: allowed is a duration of at least 1ms in whole milliseconds, such as 250ms or 1s", jobstore.ErrInvalid, OptionWidth, v)
}

// Store is the time-bucket backend.
type Store struct {
	*base.Core
	ready, index, bucketed, seq string
	width                       int64 // ms
	claimMoves                  bool
	// marker is the wake-up marker's key, as a one-key list: empty when claims poll.
	marker []string
}

var (
	_ jobstore.Store          = (*Store)(nil)
	_ jobstore.Mover          = (*Store)(nil)
	_ jobstore.BatchCompleter = (*Store)(nil)
)

// New returns a store with the default Config. It does not own c.
func New(ctx context.Context, c rclient.Client, o jobstore.Options) (*Store, error) {
	return NewWith(ctx, c, o, Config{})
}

// NewWith loads the scripts and returns a store on c configured by cfg.
func NewWith(ctx context.Context, c rclient.Client, o jobstore.Options, cfg Config) (*Store, error) {
	claimMoves, err := base.ClaimMoves("bucket", cfg.Mover)
	if err != nil {
		return nil, err
	}
	if cfg.Width == 0 {
		cfg.Width = DefaultWidth
	}
	if err := checkWidth(cfg.Width); err != nil {
		return nil, err
	}
	core, err := base.NewCore(ctx, c, o, func(enc jobstore.Encoding) (base.Scripts, error) {
		return base.ComposeScripts(ctx, c, enc, scripts, base.ScriptExtend, base.ScriptComplete, base.ScriptCompleteMany, base.ScriptLocate)
	})
	if err != nil {
		return nil, fmt.Errorf("bucket: %w", err)
	}
	k := core.Keys
	s := &Store{Core: core, ready: k.Ready(), index: k.BucketIndex(), bucketed: k.Bucketed(), seq: k.Seq(),
		width: cfg.Width.Milliseconds(), claimMoves: claimMoves}
	if !cfg.Poll {
		s.marker = []string{k.Wake()}
	}
	return s, nil
}

// Capabilities: see the package doc.
func (s *Store) Capabilities() jobstore.Capabilities {
	return jobstore.Capabilities{jobstore.CapStoreClockLeases: true, jobstore.CapStrictFIFO: true,
		jobstore.CapExactStats: true, jobstore.CapMover: true, jobstore.CapMoverLoop: !s.claimMoves,
		jobstore.CapBlockingClaim: len(s.marker) > 0, jobstore.CapBatchComplete: true}.WithCore()
}

// bucketKey is the key of the bucket whose window holds t.
func (s *Store) bucketKey(t time.Time) string {
	ms := t.UnixMilli()
	start := ms - (ms%s.width+s.width)%s.width
	return s.Keys.Bucket(start)
}

// Enqueue stores jobs atomically.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	if err := s.Check(); err != nil {
		return err
	}
	now := s.Now()
	_, args, runAts, err := s.EnqueueArgs(now, jobs)
	if err != nil {
		return err
	}
	keys := append(make([]string, 0, 5+len(runAts)), s.ready, s.index, s.bucketed, s.seq)
	keys = append(keys, s.marker...)
	fixed := len(keys)
	// Only a job not due at now goes to a bucket, and only its bucket's key
	// is sent (the script takes them in order): a key a due job cost about
	// 1,100 instructions to send, parse and push, unused.
	for _, t := range runAts {
		if t.UnixMilli() > now.UnixMilli() {
			keys = append(keys, s.bucketKey(t))
		}
	}
	_, err = s.Run(ctx, base.ScriptEnqueue, keys, append([]string{base.Ms(now), strconv.Itoa(fixed)}, args...))
	return err
}

// moved is what one run of the move script did.
type moved struct {
	promoted int
	claimed  []jobstore.Claimed
	due      []string  // buckets still holding due jobs, when asked
	next     time.Time // when a claimer may find work next (zero: unknown, or claims poll)
	emptied  bool      // the head was read and nothing waits for a claimer
}

// move runs the move script: promote up to pmax due jobs out of buckets,
// then lease and activate up to popMax ready jobs for worker, then name up
// to report due buckets.
func (s *Store) move(ctx context.Context, now time.Time, buckets []string, pmax, popMax int, deadline time.Time, worker string, report int, h base.Handoff) (moved, error) {
	keys := append([]string{s.ready, s.Keys.Active(), s.index, s.bucketed}, s.marker...)
	fixed := len(keys)
	keys = append(keys, buckets...)
	claimMoves := "0"
	if s.claimMoves {
		claimMoves = "1"
	}
	args := []string{base.Ms(now), strconv.Itoa(pmax), strconv.Itoa(popMax),
		base.Ms(deadline), s.TokenBase(), strconv.Itoa(report), strconv.Itoa(fixed), claimMoves, worker}
	if len(s.marker) > 0 {
		args = append(args, h.Args()...)
	}
	v, err := s.Run(ctx, scriptMove, keys, args)
	if err != nil {
		return moved{}, err
	}
	arr, _ := v.([]any)
	if len(arr) != 4 && len(arr) != 5 {
		return moved{}, fmt.Errorf("bucket: move: unexpected reply %v", v)
	}
	claimed, head, err := base.DecodeClaimReply(append([]any{arr[1], arr[3]}, arr[4:]...), worker, now, deadline)
	hd, read := head.(string)
	return moved{promoted: int(base.Int(arr[0])), claimed: claimed, due: base.Strings(arr[2]),
		next: base.NextDue(head), emptied: read && hd == ""}, err
}

// Claim leases and activates due jobs, blocking on the wake-up marker (or
// polling) while req.Wait allows. With mover "claim" it promotes the due
// buckets that hold older jobs first.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.WaitClaim(ctx, req, s.marker, func(now, deadline time.Time, h base.Handoff) ([]jobstore.Claimed, time.Time, error) {
		var got []jobstore.Claimed
		var buckets []string
		var next time.Time
		for round := 0; ; round++ {
			// The last round asks for no report: a move that reports due
			// buckets leaves the wake-up decision to the next one.
			report := 0
			if s.claimMoves && round < claimRounds {
				report = claimBuckets
			}
			// Only the first move ends the waiter's registration (it
			// returns what was handed to it, and nothing else).
			m, err := s.move(ctx, now, buckets, base.MaxClaim, req.Max-len(got), deadline, req.WorkerID, report, h)
			h.Leave = ""
			got = append(got, m.claimed...)
			if len(got) > 0 {
				// A claim that returns jobs does not block: a later move
				// that finds nothing must not register it as a waiter, or
				// an enqueue hands jobs to a claimer that never reads them
				// (they wait for their lease to run out).
				h.Join, h.Until = "", ""
			}
			if err != nil {
				return got, time.Time{}, err
			}
			next = m.next
			if len(m.due) == 0 || len(got) >= req.Max || round == claimRounds {
				if len(got) > 0 && m.emptied {
					s.NoteEmptied() // the next claim would find nothing: it blocks first
				}
				break
			}
			buckets = m.due
		}
		return got, next, nil
	})
}

// Promote moves up to max due jobs out of their buckets into ready and
// reports how many it moved. Movers may run concurrently: each job moves once.
func (s *Store) Promote(ctx context.Context, max int) (int, error) {
	if err := s.CheckPromote(max); err != nil {
		return 0, err
	}
	now := s.Now()
	buckets, err := s.dueBuckets(ctx, now, max)
	if err != nil || len(buckets) == 0 {
		return 0, err
	}
	m, err := s.move(ctx, now, buckets, max, 0, now, "", 0, base.Handoff{})
	return m.promoted, err
}

// dueBuckets reads up to max (0: all) bucket keys whose score is at or
// before now: a plain read, which the script that uses them re-checks.
func (s *Store) dueBuckets(ctx context.Context, now time.Time, max int) ([]string, error) {
	args := []string{"-inf", base.Ms(now), "BYSCORE"}
	if max > 0 {
		args = append(args, "LIMIT", "0", strconv.Itoa(max))
	}
	v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGE"}, Keys: []string{s.index}, Args: args})
	if err != nil {
		return nil, fmt.Errorf("bucket: read due buckets: %w", err)
	}
	return base.Strings(v), nil
}

// Fail retries with backoff (into the bucket of the retry's RunAt) or dead-letters.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.FailWith(ctx, scriptFail, l, reason, func(runAt time.Time) []string {
		keys := []string{s.bucketKey(runAt), s.index, s.bucketed}
		if len(s.marker) > 0 {
			keys = append(keys, s.ready, s.marker[0])
		}
		return keys
	})
}

// Recover takes back jobs whose lease expired; they are due at once.
func (s *Store) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	return s.RecoverWith(ctx, scriptRecover, max, append([]string{s.ready}, s.marker...))
}

// Cancel cancels a waiting job, taking it out of ready or its bucket. It
// reads the record's Ref first, to declare the bucket it names.
func (s *Store) Cancel(ctx context.Context, id string) error {
	for range cancelTries {
		j, err := s.Get(ctx, id)
		if err != nil {
			return err
		}
		place, _, ok := strings.Cut(j.Ref, "|")
		if !ok || (place != s.ready && !strings.HasPrefix(place, s.Keys.BucketPrefix())) {
			return fmt.Errorf("bucket: cancel %q: Ref %q names no place of queue %q", id, j.Ref, s.Opts.Queue)
		}
		err = s.CancelWith(ctx, scriptCancel, id, append([]string{s.ready, s.index, s.bucketed, place}, s.marker...))
		var re *rclient.RedisError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, "AE_MOVED") {
			return err
		}
	}
	return fmt.Errorf("bucket: cancel %q: the job moved %d times while being canceled", id, cancelTries)
}

// Stats counts the queue exactly on the store clock: it reads the due
// buckets, then counts everything in one script that declares them.
func (s *Store) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.Check(); err != nil {
		return jobstore.Stats{}, err
	}
	for range statsTries {
		now := s.Now()
		buckets, err := s.dueBuckets(ctx, now, 0)
		if err != nil {
			return jobstore.Stats{}, err
		}
		keys := append([]string{s.ready, s.index, s.bucketed, s.Keys.Active(), s.Keys.Dead(), s.Keys.Completed()}, buckets...)
		v, err := s.Run(ctx, scriptStats, keys, []string{base.Ms(now)})
		if err != nil {
			return jobstore.Stats{}, err
		}
		if arr, _ := v.([]any); len(arr) == 5 {
			return jobstore.Stats{Due: base.Int(arr[0]), Delayed: base.Int(arr[1]), InProgress: base.Int(arr[2]),
				Dead: base.Int(arr[3]), Completed: base.Int(arr[4])}, nil
		}
	}
	return jobstore.Stats{}, fmt.Errorf("bucket: stats: buckets kept falling due while counting (%d tries)", statsTries)
}

// Census is the queue's key census (jobstore.Censuser).
func (s *Store) Census(ctx context.Context) (jobstore.Census, error) {
	return s.TakeCensus(ctx, base.CensusSpec{Locate: s.Locate})
}

// Locate says where each job's record sits (jobstore.Locator): waiting in
// ready or in its bucket (the Ref names which), or leased in the active
// index.
func (s *Store) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	return s.LocateIn(ctx, ids, s.ready)
}
