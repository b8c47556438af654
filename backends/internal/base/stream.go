package base

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// What the two stream backends (stream and dual) share: the ready stream and
// its consumer group, the claim (XREADGROUP, blocking or not, then the
// activating script), Enqueue, Fail, Recover with the orphan sweep,
// Cancel and the counts Stats needs; Complete and CompleteMany are Core's.
// The scripts are lua/shared/stream_*.lua on top of lua/lib_stream.lua,
// whose header says how entries are read, acknowledged and trimmed.

// StreamGroup is the one consumer group that reads a queue's stream. It must
// equal STREAM_GROUP in lua/lib_stream.lua.
const StreamGroup = "workers"

// OrphanGrace is how long, on the store's clock, an entry must have been
// seen pending without a lease (read by a claimer that never activated it)
// before the orphan sweep appends it anew.
const OrphanGrace = time.Second

// Shared stream script bodies (lua/shared/stream_*.lua).
var (
	ScriptStreamActivate = NewScript("stream_activate")
	ScriptStreamClaim    = NewScript("stream_claim")
	ScriptStreamFail     = NewScript("stream_fail")
	ScriptStreamRecover  = NewScript("stream_recover")
	ScriptStreamCancel   = NewScript("stream_cancel")
	ScriptStreamPeek     = NewScript("stream_peek")
	ScriptStreamSweep    = NewScript("stream_sweep")
	ScriptStreamJoin     = NewScript("stream_join")
)

// Stream is Core plus a queue's ready stream, read by StreamGroup as a
// consumer named after this store instance.
type Stream struct {
	*Core
	// Ready is the stream key.
	Ready string
	// Consumer is this store's consumer name: "c-" and 12 random hex
	// digits, so a store's pending entries can be told apart (XINFO
	// CONSUMERS) without a consumer per worker id piling up in the group.
	Consumer string
	// PlaceKeys are the keys a job is placed with after Fail or Recover:
	// the stream, and for dual also the delayed ZSET and its sequence.
	PlaceKeys []string
	// Seeded is set by a seed variant: its entries leave the stream by
	// XDEL, as its seed's do, so Cancel deletes an unread entry too
	// instead of voiding it (lib_stream.lua's stream_void).
	Seeded bool
	// OnDue, when set (dual in mover mode "claim"), runs when the delayed
	// job a blocked Claim waits for falls due: it promotes, which wakes
	// the blocked claimer at once (see Core.WakeAt; lib_stream.lua's
	// stream_wake).
	OnDue func(context.Context)
	// Marker, when set (stream and dual, not their seed variants), is the
	// wake-up marker of lib.lua's hand-off: a Claim that reads nothing
	// registers as a waiter in the same call and blocks on BZPOPMIN of its
	// inbox and this marker, not in XREADGROUP BLOCK, so an enqueue can
	// hand it due jobs leased (see Handoff); every script that appends a
	// due entry sets the marker when anyone waits (lib_stream.lua's
	// stream_wake).
	Marker string

	sweepMu  sync.Mutex
	cursor   string               // where the next orphan sweep starts in the PEL
	suspects map[string]time.Time // pending entry id -> when first seen unleased (store clock)
}

// NewStream builds the core with the backend's own scripts (bodies) and the
// shared stream scripts, and creates the consumer group (and the stream)
// when missing. The stream is Keys.Stream(); places, when given, names the
// place keys after it (dual's delayed ZSET and its sequence).
func NewStream(ctx context.Context, c rclient.Client, o jobstore.Options, bodies embed.FS, places func(keys.Keys) []string) (*Stream, error) {
	core, err := NewCore(ctx, c, o, func(enc jobstore.Encoding) (Scripts, error) {
		return ComposeScripts(ctx, c, enc, bodies, ScriptExtend, ScriptStreamActivate, ScriptStreamClaim,
			ScriptComplete, ScriptCompleteMany, ScriptStreamFail, ScriptStreamRecover, ScriptStreamCancel, ScriptStreamPeek, ScriptStreamSweep, ScriptStreamJoin, ScriptLocate)
	})
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("consumer name: %w", err)
	}
	s := &Stream{Core: core, Ready: core.Keys.Stream(), Consumer: "c-" + hex.EncodeToString(b[:]),
		cursor: "-", suspects: map[string]time.Time{}}
	s.PlaceKeys = []string{s.Ready}
	if places != nil {
		s.PlaceKeys = append(s.PlaceKeys, places(core.Keys)...)
	}
	if err := s.ensureGroup(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// ensureGroup creates the stream and its group, reading from the first entry.
func (s *Stream) ensureGroup(ctx context.Context) error {
	_, err := s.C.Do(ctx, rclient.Command{Head: []string{"XGROUP", "CREATE"}, Keys: []string{s.Ready},
		Args: []string{StreamGroup, "0", "MKSTREAM"}})
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("create consumer group: %w", err)
	}
	return nil
}

func isNoGroup(err error) bool {
	var re *rclient.RedisError
	return errors.As(err, &re) && strings.Contains(re.Msg, "NOGROUP")
}

// Enqueue stores jobs atomically with the backend's own "enqueue" script:
// KEYS the place keys, then one record per job; ARGV now, then the
// read_new_jobs layout.
func (s *Stream) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	return s.EnqueueWith(ctx, ScriptEnqueue, s.PlaceKeys, nil, jobs)
}

// EnqueueWith stores jobs with script: KEYS fixed (the records' keys are
// derived in the script: lib.lua's read_new_jobs); ARGV now, pre..., then
// the read_new_jobs layout (a seed variant's enqueue takes the corrected
// one's arguments plus its own).
func (c *Core) EnqueueWith(ctx context.Context, script Script, fixed, pre []string, jobs []jobstore.NewJob) error {
	if err := c.Check(); err != nil {
		return err
	}
	now := c.Now()
	_, args, _, err := c.EnqueueArgs(now, jobs)
	if err != nil {
		return err
	}
	head := append([]string{Ms(now)}, pre...)
	_, err = c.Run(ctx, script, fixed, append(head, args...))
	return err
}

// CancelIn cancels a waiting job: its stream entry leaves the claims' way
// (stream_cancel.lua), or its member of delayed, when given, goes.
func (s *Stream) CancelIn(ctx context.Context, id string, delayed ...string) error {
	mode := "void"
	if s.Seeded {
		mode = "drop"
	}
	return s.CancelWith(ctx, ScriptStreamCancel, id, append([]string{s.Ready}, delayed...), mode)
}

// Complete and CompleteMany are Core's: a claimed job's entry was
// acknowledged when it was leased (lib_stream.lua), so finishing it touches
// no stream.

// Fail retries the job (placed anew with PlaceKeys) or dead-letters it.
func (s *Stream) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.FailWith(ctx, ScriptStreamFail, l, reason, func(time.Time) []string { return s.PlaceKeys })
}

// Recover takes back up to max jobs whose lease expired (on the store's
// clock, from the active index, as every backend does), then sweeps up to
// max pending entries for orphans (see sweepOrphans). Orphans are not
// listed in the result: they never started, so they are not retries.
func (s *Stream) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	res, err := s.RecoverWith(ctx, ScriptStreamRecover, max, s.PlaceKeys)
	if err != nil {
		return res, err
	}
	if _, err := s.sweepOrphans(ctx, max); err != nil {
		return res, fmt.Errorf("recover: orphan sweep: %w", err)
	}
	return res, nil
}

// sweepOrphans looks at up to n pending entries, from where the last sweep
// of this store stopped (wrapping around at the end of the PEL), and
// appends anew every one whose job has no lease and which this store saw
// unleased at least OrphanGrace earlier on the store's clock. Such an entry
// was read by a claimer that never activated it; an entry that is merely
// between a claimer's read and its activation is left alone (it is leased
// by the next sweep), and if a slow claimer activates after all, its
// activation finds the Ref moved and drops the old entry: no job runs
// twice. It returns how many orphans it appended anew. Concurrent sweeps of
// one store do not wait for each other: the later one skips.
func (s *Stream) sweepOrphans(ctx context.Context, n int) (int, error) {
	if !s.sweepMu.TryLock() {
		return 0, nil
	}
	defer s.sweepMu.Unlock()
	now := s.Now()
	start := s.cursor
	v, err := s.Run(ctx, ScriptStreamPeek, []string{s.Ready}, []string{start, strconv.Itoa(n)})
	if isNoGroup(err) {
		return 0, nil // no group, no pending entries
	}
	if err != nil {
		return 0, err
	}
	arr, _ := v.([]any)
	if len(arr) != 3 {
		return 0, fmt.Errorf("%s: unexpected reply %T", ScriptStreamPeek, v)
	}
	last, _ := arr[1].(string)
	pairs := Strings(arr[2])
	wrapped := Int(arr[0]) < int64(n)
	if wrapped {
		s.cursor = "-"
	} else {
		s.cursor = "(" + last
	}
	// Forget suspects in the range just read that are no longer pending.
	from := strings.TrimPrefix(start, "(")
	seen := make(map[string]bool, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		seen[pairs[i]] = true
	}
	for id := range s.suspects {
		if !seen[id] && (from == "-" || streamIDLess(from, id)) && (wrapped || !streamIDLess(last, id)) {
			delete(s.suspects, id)
		}
	}
	if len(pairs) == 0 {
		return 0, nil
	}
	keys := append(make([]string, 0, 1+len(pairs)/2), s.Ready)
	args := make([]string, 0, len(pairs)/2*3)
	for i := 0; i+1 < len(pairs); i += 2 {
		confirm := "0"
		if t, ok := s.suspects[pairs[i]]; ok && now.Sub(t) >= OrphanGrace {
			confirm = "1"
		}
		keys = append(keys, s.Keys.Job(pairs[i+1]))
		args = append(args, pairs[i], pairs[i+1], confirm)
	}
	v, err = s.Run(ctx, ScriptStreamSweep, keys, args)
	if err != nil {
		return 0, err
	}
	moved := 0
	for i, verdict := range Strings(v) {
		id := args[3*i]
		switch verdict {
		case "w":
			if _, ok := s.suspects[id]; !ok {
				s.suspects[id] = now
			}
		case "r":
			moved++
			delete(s.suspects, id)
		default:
			delete(s.suspects, id)
		}
	}
	return moved, nil
}

// StreamCounts are the stream's part of Stats.
type StreamCounts struct {
	// Unread entries: jobs waiting in the stream. The group's lag (entries
	// added minus entries read) less the voided entries: read entries stay
	// in the stream until their node is trimmed, so XLEN minus Pending
	// counts them too. It is never more than XLEN minus Pending minus the
	// voided, which a trim of unread entries (seed003-maxlen's MAXLEN: the
	// lag still counts them) keeps honest, and it is that bound when Redis
	// cannot tell the lag (before 7.0, or after an XDEL ahead of the group,
	// which only a seed variant does).
	Unread int64
	// Entries is XLEN: a seed variant, whose entries leave by XDEL, counts
	// with it.
	Entries int64
	// Pending entries: read by a blocking claim that has not leased them
	// yet, plus orphans the sweep has not yet brought back (and a seed
	// variant's entries it keeps pending).
	Pending int64
	// Leased jobs: members of the active index.
	Leased    int64
	Dead      int64
	Completed int64
	// Extra are the integer replies of the extra commands, in order.
	Extra []int64
}

// Counts reads the stream's counts and the extra commands in one round trip.
func (s *Stream) Counts(ctx context.Context, extra ...rclient.Command) (StreamCounts, error) {
	const lagAt = 6 // the XINFO GROUPS reply's place
	cmds := append([]rclient.Command{
		rclient.Cmd("XLEN", s.Ready),
		rclient.Cmd("XPENDING", s.Ready, StreamGroup),
		rclient.Cmd("ZCARD", s.Keys.Dead()),
		rclient.Cmd("GET", s.Keys.Completed()),
		rclient.Cmd("ZCARD", s.Keys.Active()),
		rclient.Cmd("SCARD", s.Keys.Voided()),
		{Head: []string{"XINFO", "GROUPS"}, Keys: []string{s.Ready}},
	}, extra...)
	rs := s.C.DoMulti(ctx, cmds...)
	var c StreamCounts
	lag := int64(-1)
	var voided int64
	for i, r := range rs {
		if r.Err != nil && !((i == 1 || i == lagAt) && (isNoGroup(r.Err) || isNoKey(r.Err))) {
			return c, fmt.Errorf("stats: %w", r.Err)
		}
		n := Int(r.Val)
		switch i {
		case 0:
			c.Entries = n
		case 1:
			if arr, _ := r.Val.([]any); len(arr) > 0 {
				c.Pending = Int(arr[0])
			}
		case 2:
			c.Dead = n
		case 3:
			c.Completed = n
		case 4:
			c.Leased = n
		case 5:
			voided = n
		case lagAt:
			lag = groupLag(r.Val, StreamGroup)
		default:
			c.Extra = append(c.Extra, n)
		}
	}
	if bound := c.Entries - c.Pending; lag < 0 || bound < lag {
		lag = bound
	}
	c.Unread = max(lag-voided, 0)
	return c, nil
}

// isNoKey is XINFO's error for a stream that does not exist (yet).
func isNoKey(err error) bool {
	var re *rclient.RedisError
	return errors.As(err, &re) && strings.Contains(re.Msg, "no such key")
}

// groupLag is the lag of group in an XINFO GROUPS reply (a list of maps in
// RESP3, of flat name, value lists in RESP2), or -1 when Redis gives none.
func groupLag(v any, group string) int64 {
	for _, g := range asSlice(v) {
		f := fields(g)
		if f["name"] != group {
			continue
		}
		if n, ok := f["lag"].(int64); ok {
			return n
		}
		return -1
	}
	return -1
}
