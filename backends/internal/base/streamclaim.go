package base

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

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
func (s *Stream) claimRound(ctx context.Context, req jobstore.ClaimRequest, count, promote int, h Handoff) (activated, error) {
	now := s.Now()
	deadline := now.Add(req.Lease)
	keys := []string{s.Keys.Active(), s.Ready}
	if promote > 0 {
		keys = append(keys, s.PlaceKeys[1])
	}
	args := []string{Ms(now), Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max), strconv.Itoa(count),
		s.Consumer, strconv.Itoa(promote)}
	if s.Marker != "" {
		args = append(args, h.Args()...)
	}
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
	if len(arr) == 7 {
		item, _ := arr[6].(string)
		got, err := decodeHandoff(item, req.WorkerID)
		return activated{claimed: got}, err
	}
	if len(arr) != 6 {
		return activated{}, fmt.Errorf("%s: unexpected reply %T", ScriptStreamClaim, v)
	}
	a := activated{read: int(Int(arr[3]))}
	a.last, _ = arr[4].(string)
	a.due = NextDue(arr[5])
	err = a.decode(arr[:3], req.WorkerID, now, deadline)
	return a, err
}

// decode reads the {claimed jobs, tail, next} part of a reply.
// Claimed jobs come back oldest RunAt first, stream order among equal
// RunAt (lib_stream.lua's stream_take sorts them).
func (a *activated) decode(arr []any, worker string, now, deadline time.Time) error {
	var err error
	if a.claimed, err = DecodeClaimed(arr[0], worker, now, deadline); err != nil {
		return err
	}
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
// activates what it reads with stream_activate. With the hand-off (Marker)
// it blocks on its inbox and the marker instead, and a waiting claim after
// one that drained the queue or was handed jobs registers first (join).
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
	end := s.waitEnd(ctx, req)
	var next time.Time // earliest RunAt this pass appended anew
	count := req.Max
	handoff := s.Marker != ""
	var h Handoff
	idle, due, err := s.blockFirst(ctx, req, end, promote, &h) // due: the delayed head
	if err != nil {
		return s.blockFailed(ctx, h.Leave, err) // the registration may stand
	}
	for {
		asked := count
		var a activated
		if idle && handoff {
			got, err := s.waitHanded(ctx, &h, end, due)
			if err != nil || len(got) > 0 || h.Leave == "" && time.Until(end) <= 0 {
				return got, err
			}
			idle = false
			continue
		}
		if idle {
			if a, err = s.blockRound(ctx, req, count, end, due, promote); err == nil && a.read == 0 {
				if time.Until(end) <= 0 {
					return nil, nil
				}
				idle = false
				continue
			}
		} else {
			a, err = s.round(ctx, req, count, promote, end, &h)
			due = a.due
		}
		if err != nil {
			if req.Wait > 0 && rclient.Ended(ctx) {
				// the wait ended with the context, as PollClaim's does
				return s.callFailed(ctx, h, err)
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
				if h.Leave != "" {
					return s.leave(ctx, h.Leave)
				}
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
		if !s.pause(ctx, end, next) {
			return nil, nil
		}
		next, count = time.Time{}, req.Max
	}
}

// waitEnd is when a claim's wait ends, in real time: req.Wait from now,
// or blockMargin before ctx's deadline when that comes first.
func (s *Stream) waitEnd(ctx context.Context, req jobstore.ClaimRequest) time.Time {
	end := time.Now().Add(s.Real(req.Wait))
	if dl, ok := ctx.Deadline(); ok && req.Wait > 0 && dl.Add(-blockMargin).Before(end) {
		end = dl.Add(-blockMargin)
	}
	return end
}

// round is one stream_claim call of Claim's loop. With the hand-off
// (Marker set) it ends the registration h.Leave and, when the wait leaves
// time to block, registers h.Join, which holds if the call read nothing
// (h.Leave is then the new registration). On an error h keeps both names:
// the call may have run (callFailed).
func (s *Stream) round(ctx context.Context, req jobstore.ClaimRequest, count, promote int, end time.Time, h *Handoff) (activated, error) {
	h.Join, h.Until = "", ""
	if s.Marker != "" && req.Wait > 0 && time.Until(end) > minBlock {
		h.Join, h.Until = s.registration(req, s.Now())
	}
	a, err := s.claimRound(ctx, req, count, promote, *h)
	if err != nil {
		return a, err // h names both registrations for callFailed
	}
	h.Leave = ""
	if a.read == 0 && len(a.claimed) == 0 {
		h.Leave = h.Join
	}
	return a, nil
}

// blockFirst says whether a claim starts by blocking (see Core.BlockClaim):
// right after a claim that drained the queue, its round would find
// nothing. With the hand-off it registers first (join), which stream_join
// refuses when an entry waits unread, since an entry appended while no one
// waited set no marker; due is then the delayed head (see join).
func (s *Stream) blockFirst(ctx context.Context, req jobstore.ClaimRequest, end time.Time, promote int, h *Handoff) (bool, time.Time, error) {
	if !s.emptied.Swap(false) || req.Wait <= 0 {
		return false, time.Time{}, nil
	}
	if s.Marker == "" {
		return true, time.Time{}, nil
	}
	return s.join(ctx, req, end, promote, h)
}

// join registers the claimer as a waiter without a claim call
// (stream_join), when the wait leaves time to block: true when it did
// (h.Leave is the registration), with the delayed ZSET's head when claims
// promote (zero: none); false when an entry waits unread or a delayed job
// is due, and the claimer must run a round. On an error h.Leave names the
// registration, which may stand.
func (s *Stream) join(ctx context.Context, req jobstore.ClaimRequest, end time.Time, promote int, h *Handoff) (bool, time.Time, error) {
	if time.Until(end) <= minBlock || ctx.Err() != nil {
		return false, time.Time{}, nil
	}
	now := s.Now()
	member, until := s.registration(req, now)
	keys := []string{s.Ready}
	if promote > 0 {
		keys = append(keys, s.PlaceKeys[1])
	}
	h.Leave = member
	v, err := s.Run(ctx, ScriptStreamJoin, keys, []string{Ms(now), member, until})
	if err != nil {
		return false, time.Time{}, fmt.Errorf("%s: %w", ScriptStreamJoin, err)
	}
	arr, _ := v.([]any)
	if len(arr) == 0 || Int(arr[0]) != 1 {
		h.Leave = ""
		return false, time.Time{}, nil
	}
	var due time.Time
	if len(arr) > 1 {
		due = NextDue(arr[1])
	}
	return true, due, nil
}

// pause waits between two passes over jobs read too early: PollPause, or
// until next (the earliest RunAt the pass saw), or end; false when the
// wait or ctx is over.
func (s *Stream) pause(ctx context.Context, end, next time.Time) bool {
	d := min(time.Until(end), s.PollPause(), max(s.Real(next.Sub(s.Now())), time.Millisecond))
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// blockRound waits in XREADGROUP BLOCK until end, or until due (when not
// zero) with OnDue armed for that instant, then activates what it read.
func (s *Stream) blockRound(ctx context.Context, req jobstore.ClaimRequest, count int, end, due time.Time, promote int) (activated, error) {
	block := s.blockFor(end, due)
	if block <= 0 {
		return activated{}, nil
	}
	es, err := s.read(ctx, count, block)
	if err != nil || len(es) == 0 {
		return activated{}, err
	}
	return s.activate(ctx, req, es, promote)
}

// blockFor is how long an idle claim blocks: until end, or until due (when
// not zero), with OnDue armed for that instant.
func (s *Stream) blockFor(end, due time.Time) time.Duration {
	block := time.Until(end)
	if !due.IsZero() {
		block = min(block, s.Real(due.Sub(s.Now())))
		if s.OnDue != nil {
			s.WakeAt(due, s.OnDue)
		}
	}
	return block
}

// waitHanded is blockRound for the streams' hand-off: it blocks on the inbox of
// registration h.Leave and the marker until end, or until due (when not
// zero) with OnDue armed for that instant (Core.blockHanded), and returns
// the jobs an enqueue handed it. h.Leave is cleared when the registration
// is over; else the next claim round ends it. Jobs handed make the next
// Claim join first.
func (s *Stream) waitHanded(ctx context.Context, h *Handoff, end, due time.Time) ([]jobstore.Claimed, error) {
	block := s.blockFor(end, due)
	if block <= 0 {
		return nil, nil
	}
	if h.Leave != "" {
		block = holdBlock(block)
	}
	got, done, err := s.blockHanded(ctx, h.Leave, s.Marker, block, end)
	if done {
		h.Leave = ""
	}
	if len(got) > 0 && err == nil {
		// Handed because nothing waited unread: the next claim joins
		// first (join; as Core.BlockClaim's).
		s.NoteEmptied()
	}
	return got, err
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
