package base

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// What the two stream backends (stream and dual) share: the ready stream and
// its consumer group, the claim (XREADGROUP, blocking or not, then the
// activating script), Enqueue, Complete, Fail, Recover with the orphan
// sweep, the Cancel script and the counts Stats needs. The scripts are lua/shared/stream_*.lua on top
// of the stream section of lua/lib.lua.

// StreamGroup is the one consumer group that reads a queue's stream. It must
// equal STREAM_GROUP in lua/lib.lua.
const StreamGroup = "workers"

// OrphanGrace is how long, on the store's clock, an entry must have been
// seen pending without a lease (read by a claimer that never activated it)
// before the orphan sweep appends it anew.
const OrphanGrace = time.Second

// activateTimeout bounds the activating call after a read that returned
// entries: it runs even when the caller's context has ended meanwhile,
// because an entry read and never activated is an orphan that only the
// sweep brings back.
const activateTimeout = 5 * time.Second

// scanCount is how many entries a claim reads per round once it is looking
// past jobs read before their RunAt, whatever its Max: a claim for one job
// behind a thousand delayed ones then takes ten rounds, not a thousand.
const scanCount = 100

// blockMargin is kept between the end of a blocking read and the caller's
// context deadline, so that Redis answers the read before the client gives
// up on it (a read the client abandons may still deliver entries: orphans).
const blockMargin = 50 * time.Millisecond

// Shared stream script bodies (lua/shared/stream_*.lua).
var (
	ScriptStreamActivate     = NewScript("stream_activate")
	ScriptStreamClaim        = NewScript("stream_claim")
	ScriptStreamComplete     = NewScript("stream_complete")
	ScriptStreamCompleteMany = NewScript("stream_complete_many")
	ScriptStreamFail         = NewScript("stream_fail")
	ScriptStreamRecover      = NewScript("stream_recover")
	ScriptStreamCancel       = NewScript("stream_cancel")
	ScriptStreamPeek         = NewScript("stream_peek")
	ScriptStreamSweep        = NewScript("stream_sweep")
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
	// OnDue, when set (dual in mover mode "claim"), runs when the delayed
	// job a blocked Claim waits for falls due: it promotes, and the XADD
	// wakes the blocked read at once (see Core.WakeAt).
	OnDue func(context.Context)

	sweepMu  sync.Mutex
	cursor   string               // where the next orphan sweep starts in the PEL
	suspects map[string]time.Time // pending entry id -> when first seen unleased (store clock)
}

// NewStream builds the core with the backend's own scripts (bodies) and the
// shared stream scripts, and creates the consumer group (and the stream)
// when missing. The stream is Keys.Of("stream"); placeNames name the
// place keys after it (dual's "delayed" ZSET and its "seq"uence).
func NewStream(ctx context.Context, c rclient.Client, o jobstore.Options, bodies embed.FS, placeNames ...string) (*Stream, error) {
	core, err := NewCore(ctx, c, o, func(enc jobstore.Encoding) (Scripts, error) {
		return ComposeScripts(ctx, c, enc, bodies, ScriptExtend, ScriptStreamActivate, ScriptStreamClaim,
			ScriptStreamComplete, ScriptStreamCompleteMany, ScriptStreamFail, ScriptStreamRecover, ScriptStreamCancel, ScriptStreamPeek, ScriptStreamSweep, ScriptLocate)
	})
	if err != nil {
		return nil, err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("consumer name: %w", err)
	}
	s := &Stream{Core: core, Ready: core.Keys.Of("stream"), Consumer: "c-" + hex.EncodeToString(b[:]),
		cursor: "-", suspects: map[string]time.Time{}}
	s.PlaceKeys = []string{s.Ready}
	for _, n := range placeNames {
		s.PlaceKeys = append(s.PlaceKeys, core.Keys.Of(n))
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

// streamEntry is one entry an XREADGROUP returned.
type streamEntry struct{ id, job string }

// read is XREADGROUP ... COUNT count [BLOCK ms] STREAMS stream >: blocking
// (on a connection of its own) when block > 0. A missing group (the key was
// deleted) is created again and the read retried once.
func (s *Stream) read(ctx context.Context, count int, block time.Duration) ([]streamEntry, error) {
	head := []string{"XREADGROUP", "GROUP", StreamGroup, s.Consumer, "COUNT", strconv.Itoa(count)}
	do := s.C.Do
	if block > 0 {
		ms := (block + time.Millisecond - 1) / time.Millisecond // BLOCK 0 would mean forever
		head = append(head, "BLOCK", strconv.FormatInt(int64(ms), 10))
		do = s.C.DoBlocking
	}
	cmd := rclient.Command{Head: append(head, "STREAMS"), Keys: []string{s.Ready}, Args: []string{">"}}
	v, err := do(ctx, cmd)
	if isNoGroup(err) {
		if err = s.ensureGroup(ctx); err == nil {
			v, err = do(ctx, cmd)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read stream: %w", err)
	}
	return parseRead(v, s.Ready), nil
}

// parseRead takes the entries of key out of an XREADGROUP reply (a map in
// RESP3, a list of [key, entries] pairs in RESP2).
func parseRead(v any, key string) []streamEntry {
	var list []any
	switch r := v.(type) {
	case map[string]any:
		list, _ = r[key].([]any)
	case []any:
		for _, x := range r {
			if kv, _ := x.([]any); len(kv) == 2 && kv[0] == key {
				list, _ = kv[1].([]any)
			}
		}
	}
	out := make([]streamEntry, 0, len(list))
	for _, x := range list {
		e, _ := x.([]any)
		if len(e) != 2 {
			continue
		}
		id, _ := e[0].(string)
		var job string
		switch f := e[1].(type) {
		case []any:
			for i := 0; i+1 < len(f); i += 2 {
				if f[i] == "id" {
					job, _ = f[i+1].(string)
				}
			}
		case map[string]any:
			job, _ = f["id"].(string)
		}
		out = append(out, streamEntry{id: id, job: job})
	}
	return out
}

// activated is what one claiming call did besides claiming.
type activated struct {
	claimed []jobstore.Claimed
	// read is how many entries the call read, last the last one's id.
	read int
	last string
	// tail is the stream's last entry id before the call appended any.
	tail string
	// next is the earliest RunAt of the jobs it appended anew for being
	// read too early (zero when none).
	next time.Time
	// due is when the delayed ZSET's head falls due (dual in mover mode
	// "claim"; zero: none).
	due time.Time
}

// drained says whether a claim that took work left nothing a claimer could
// find without a wake: it read every unread entry (fewer than it asked
// for, or up to the tail), appended none anew for being early, and, when
// claims promote, saw the delayed ZSET empty (dual's delayed enqueue wakes
// no reader, so a claimer that knows of one must look before it blocks).
func (a activated) drained(asked, promote int) bool {
	atTail := a.read < asked || (a.tail != "" && !streamIDLess(a.last, a.tail))
	return len(a.claimed) > 0 && atTail && a.next.IsZero() && (promote == 0 || a.due.IsZero())
}

// activate runs stream_activate for entries a blocking read returned, on a
// context of its own (see activateTimeout); it claims at most req.Max of
// them.
func (s *Stream) activate(ctx context.Context, req jobstore.ClaimRequest, es []streamEntry, promote int) (activated, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), activateTimeout)
	defer cancel()
	now := s.Now()
	deadline := now.Add(req.Lease)
	args := append(make([]string, 0, 5+2*len(es)), Ms(now), Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max))
	for _, e := range es {
		args = append(args, e.id, e.job)
	}
	keys := []string{s.Keys.Active(), s.Ready}
	if promote > 0 {
		keys = append(keys, s.PlaceKeys[1])
	}
	v, err := s.Run(ctx, ScriptStreamActivate, keys, args)
	if err != nil {
		return activated{}, err
	}
	arr, _ := v.([]any)
	if len(arr) != 4 {
		return activated{}, fmt.Errorf("%s: unexpected reply %T", ScriptStreamActivate, v)
	}
	a := activated{read: len(es), last: es[len(es)-1].id, due: NextDue(arr[3])}
	err = a.decode(arr, req.WorkerID, now, deadline)
	return a, err
}

// claimRound is one whole claim in one call (stream_claim): promote up to
// promote due delayed jobs (0: none), read up to count new entries, claim
// up to req.Max of them.
func (s *Stream) claimRound(ctx context.Context, req jobstore.ClaimRequest, count, promote int) (activated, error) {
	now := s.Now()
	deadline := now.Add(req.Lease)
	keys := []string{s.Keys.Active(), s.Ready}
	if promote > 0 {
		keys = append(keys, s.PlaceKeys[1])
	}
	args := []string{Ms(now), Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max), strconv.Itoa(count),
		s.Consumer, strconv.Itoa(promote)}
	v, err := s.Run(ctx, ScriptStreamClaim, keys, args)
	if isNoGroup(err) {
		if err = s.ensureGroup(ctx); err == nil {
			v, err = s.Run(ctx, ScriptStreamClaim, keys, args)
		}
	}
	if err != nil {
		return activated{}, err
	}
	arr, _ := v.([]any)
	if len(arr) != 6 {
		return activated{}, fmt.Errorf("%s: unexpected reply %T", ScriptStreamClaim, v)
	}
	a := activated{read: int(Int(arr[3]))}
	a.last, _ = arr[4].(string)
	a.due = NextDue(arr[5])
	err = a.decode(arr[:3], req.WorkerID, now, deadline)
	return a, err
}

// decode reads the {token, record pairs, tail, next} part of a reply.
// Claimed jobs come back oldest RunAt first, stream order among equal RunAt.
func (a *activated) decode(arr []any, worker string, now, deadline time.Time) error {
	var err error
	if a.claimed, err = DecodeClaimed(arr[0], worker, now, deadline); err != nil {
		return err
	}
	sort.SliceStable(a.claimed, func(i, j int) bool { return a.claimed[i].Job.RunAt.Before(a.claimed[j].Job.RunAt) })
	a.tail, _ = arr[1].(string)
	if ms := Int(arr[2]); ms != 0 {
		a.next = time.UnixMilli(ms)
	}
	return nil
}

// Claim claims up to req.Max jobs, until it has claimed something or
// req.Wait (cut short by ctx's deadline) is over. A round is one
// stream_claim call (promoting first when promote > 0, dual's mover in
// claim mode); after a round that read nothing, the claim blocks in
// XREADGROUP BLOCK (no longer than until the delayed head falls due, when
// the round reported one; OnDue then also fires at that instant) and
// activates what it reads with stream_activate.
//
// A round that found only jobs read before their RunAt (appended anew by
// the script) starts a pass: the claim reads on, scanCount entries a round,
// until it has read up to the stream's tail as it was before its appends,
// that is, until every waiting entry has been looked at once; then it
// pauses Options.PollInterval (or until the earliest such RunAt, or the end
// of the wait) before the next pass, so that it never spins on them.
func (s *Stream) Claim(ctx context.Context, req jobstore.ClaimRequest, promote int) ([]jobstore.Claimed, error) {
	if err := ValidateClaim(req); err != nil {
		return nil, err
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	end := time.Now().Add(s.Real(req.Wait))
	if dl, ok := ctx.Deadline(); ok && req.Wait > 0 && dl.Add(-blockMargin).Before(end) {
		end = dl.Add(-blockMargin)
	}
	var next, due time.Time // earliest RunAt this pass appended anew; the delayed head
	count := req.Max
	// A claim right after one that drained the queue blocks first (see
	// Core.BlockClaim): its round would find nothing.
	idle := s.emptied.Swap(false) && req.Wait > 0
	for {
		asked := count
		var a activated
		var err error
		if idle {
			if a, err = s.blockRound(ctx, req, count, end, due, promote); err == nil && a.read == 0 {
				if time.Until(end) <= 0 {
					return nil, nil
				}
				idle = false
				continue
			}
		} else {
			a, err = s.claimRound(ctx, req, count, promote)
			due = a.due
		}
		if err != nil {
			if req.Wait > 0 && ctx.Err() != nil {
				return nil, nil // the wait ended with the context, as PollClaim's does
			}
			return nil, err
		}
		if len(a.claimed) > 0 {
			if a.drained(asked, promote) {
				s.NoteEmptied()
			}
			return a.claimed, nil
		}
		if a.read == 0 {
			if time.Until(end) <= 0 {
				return nil, nil
			}
			idle = true
			continue
		}
		idle = false
		if !a.next.IsZero() && (next.IsZero() || a.next.Before(next)) {
			next = a.next
		}
		atTail := a.read < asked || !streamIDLess(a.last, a.tail)
		if next.IsZero() || !atTail {
			if !next.IsZero() {
				count = max(req.Max, scanCount)
			}
			continue // nothing appended yet, or entries left to look at
		}
		pause := min(time.Until(end), s.PollPause(), max(s.Real(next.Sub(s.Now())), time.Millisecond))
		next, count = time.Time{}, req.Max
		if pause <= 0 {
			return nil, nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-t.C:
		}
	}
}

// blockRound waits in XREADGROUP BLOCK until end, or until due (when not
// zero) with OnDue armed for that instant, then activates what it read.
func (s *Stream) blockRound(ctx context.Context, req jobstore.ClaimRequest, count int, end, due time.Time, promote int) (activated, error) {
	block := time.Until(end)
	if !due.IsZero() {
		block = min(block, s.Real(due.Sub(s.Now())))
		if s.OnDue != nil {
			s.WakeAt(due, s.OnDue)
		}
	}
	if block <= 0 {
		return activated{}, nil
	}
	es, err := s.read(ctx, count, block)
	if err != nil || len(es) == 0 {
		return activated{}, err
	}
	return s.activate(ctx, req, es, promote)
}

// streamIDLess orders stream entry ids "<ms>-<seq>".
func streamIDLess(a, b string) bool {
	am, as := splitStreamID(a)
	bm, bs := splitStreamID(b)
	return am < bm || am == bm && as < bs
}

func splitStreamID(id string) (ms, seq uint64) {
	m, q, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(q, 10, 64)
	return ms, seq
}

// Enqueue stores jobs atomically with the backend's own "enqueue" script:
// KEYS the place keys, then one record per job; ARGV now, then the
// read_new_jobs layout.
func (s *Stream) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	return s.EnqueueWith(ctx, ScriptEnqueue, s.PlaceKeys, nil, jobs)
}

// EnqueueWith stores jobs with script: KEYS fixed, then one record per
// job; ARGV now, pre..., then the read_new_jobs layout (a seed variant's
// enqueue takes the corrected one's arguments plus its own).
func (c *Core) EnqueueWith(ctx context.Context, script Script, fixed, pre []string, jobs []jobstore.NewJob) error {
	if err := c.Check(); err != nil {
		return err
	}
	now := c.Now()
	keys, args, _, err := c.EnqueueArgs(now, jobs)
	if err != nil {
		return err
	}
	head := append([]string{Ms(now)}, pre...)
	_, err = c.Run(ctx, script, append(slices.Clip(fixed), keys...), append(head, args...))
	return err
}

// Complete finishes a held lease and acknowledges and deletes its entry.
func (s *Stream) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.CompleteWith(ctx, ScriptStreamComplete, l, result, []string{s.Ready})
}

// CompleteMany completes many leases in one call per MaxClaim of them,
// their entries acknowledged and deleted together (jobstore.BatchCompleter).
func (s *Stream) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return s.CompleteManyWith(ctx, ScriptStreamCompleteMany, cs, []string{s.Ready})
}

// Fail drops the job's entry and retries it (placed with PlaceKeys) or
// dead-letters it.
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
	// Unread entries: jobs waiting in the stream (XLEN minus pending).
	Unread int64
	// Pending entries: leased jobs, plus orphans the sweep has not yet
	// brought back.
	Pending   int64
	Dead      int64
	Completed int64
	// Extra are the integer replies of the extra commands, in order.
	Extra []int64
}

// Counts reads the stream's counts and the extra commands in one round trip.
func (s *Stream) Counts(ctx context.Context, extra ...rclient.Command) (StreamCounts, error) {
	cmds := append([]rclient.Command{
		rclient.Cmd("XLEN", s.Ready),
		rclient.Cmd("XPENDING", s.Ready, StreamGroup),
		rclient.Cmd("ZCARD", s.Keys.Dead()),
		rclient.Cmd("GET", s.Keys.Completed()),
	}, extra...)
	rs := s.C.DoMulti(ctx, cmds...)
	var c StreamCounts
	for i, r := range rs {
		if r.Err != nil && !(i == 1 && isNoGroup(r.Err)) {
			return c, fmt.Errorf("stats: %w", r.Err)
		}
		n := Int(r.Val)
		if i == 1 {
			if arr, _ := r.Val.([]any); len(arr) > 0 {
				n = Int(arr[0])
			}
		}
		switch i {
		case 0:
			c.Unread = n
		case 1:
			c.Pending = n
		case 2:
			c.Dead = n
		case 3:
			c.Completed = n
		default:
			c.Extra = append(c.Extra, n)
		}
	}
	c.Unread = max(c.Unread-c.Pending, 0)
	return c, nil
}
