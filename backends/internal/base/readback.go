package base

// What the harness reads back from a store after a run: where each open
// job sits (jobstore.Locator, the shared locate script) and what the
// store's design left behind or counted (jobstore.Auditor).

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// MaxLocate is how many ids one locate call reads; LocateIn splits larger
// batches.
const MaxLocate = 1000

// LocateIn is Locate (jobstore.Locator) with the shared locate script:
// indexes are the keys a waiting job's Ref may name (a bucket Ref names
// its own key).
func (c *Core) LocateIn(ctx context.Context, ids []string, indexes ...string) ([]jobstore.Location, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	keys := append([]string{c.Keys.Active()}, indexes...)
	out := make([]jobstore.Location, 0, len(ids))
	for start := 0; start < len(ids); start += MaxLocate {
		batch := ids[start:min(start+MaxLocate, len(ids))]
		v, err := c.Run(ctx, ScriptLocate, keys, batch)
		if err != nil {
			return out, fmt.Errorf("locate: %w", err)
		}
		arr, _ := v.([]any)
		if len(arr) != len(batch) {
			return out, fmt.Errorf("locate: %d replies for %d ids", len(arr), len(batch))
		}
		for _, e := range arr {
			pair, _ := e.([]any)
			var loc jobstore.Location
			if len(pair) == 2 {
				st, _ := pair[0].(string)
				if n, err := strconv.Atoi(st); err == nil {
					loc = jobstore.Location{Found: true, Status: jobstore.Status(n)}
				}
				loc.Reachable = Int(pair[1]) == 1
			}
			out = append(out, loc)
		}
	}
	return out, nil
}

// AuditExpiredWaiters is the audit count of the hand-off's registrations
// whose wait had ended on the store's clock when the audit read them
// after the drain: claimers that died registered, which Recover and every
// leave sweep (lib.lua's handoff_sweep). After a run whose recoverer ran
// past the last kill, a store leaves none.
const AuditExpiredWaiters = "expired_registrations"

// AuditCounts reads the counts a seed variant kept in Keys.Audit, and
// AuditExpiredWaiters.
func (c *Core) AuditCounts(ctx context.Context) (map[string]int64, error) {
	v, err := c.C.Do(ctx, rclient.Cmd("HGETALL", c.Keys.Audit()))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	r, _ := v.(map[string]any) // rclient speaks RESP3: HGETALL is a map
	m := make(map[string]int64, len(r)+1)
	for k, n := range r {
		m[k] = Int(n)
	}
	v, err = c.C.Do(ctx, rclient.Command{Head: []string{"ZCOUNT"}, Keys: []string{c.Keys.Waiters()}, Args: []string{"-inf", Ms(c.Now())}})
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	m[AuditExpiredWaiters] = Int(v)
	return m, nil
}

// Audit reads AuditCounts (jobstore.Auditor); the stream stores add
// theirs (Stream.Audit).
func (c *Core) Audit(ctx context.Context) (map[string]int64, error) { return c.AuditCounts(ctx) }

// AddAudit adds n to a seed variant's count name in Keys.Audit (nothing
// when n is 0).
func (c *Core) AddAudit(ctx context.Context, name string, n int64) error {
	if n == 0 {
		return nil
	}
	_, err := c.C.Do(ctx, rclient.Cmd("HINCRBY", c.Keys.Audit(), name, strconv.FormatInt(n, 10)))
	return err
}

// AuditPending is the audit count every stream store reads after a run's
// drain: entries delivered to the group and never acknowledged
// (XPENDING's count). Once every job has finished, a corrected store holds
// none (a claim reads with NOACK or acknowledges what it leases, and the
// orphan sweep brings back or passes what a dead claimer left); a claim that refuses an entry without
// acknowledging it (seed 000's) leaves one per refusal for good.
const AuditPending = "pel_pending"

// Audit reads AuditPending, and a seed variant's own counts (Keys.Audit)
// (jobstore.Auditor).
func (s *Stream) Audit(ctx context.Context) (map[string]int64, error) {
	n, err := s.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	m, err := s.AuditCounts(ctx)
	if err != nil {
		return nil, err
	}
	m[AuditPending] = n.Pending
	return m, nil
}

// Locate says where each job's record sits (jobstore.Locator): an entry in
// the stream that a claim will still read (unread, or pending for the
// orphan sweep; lib_stream.lua's stream_unread), a member of a
// place key after the stream (dual's delayed ZSET), or leased in the
// active index.
func (s *Stream) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	var places []string
	for _, k := range s.PlaceKeys {
		if k != s.Keys.Seq() {
			places = append(places, k)
		}
	}
	return s.LocateIn(ctx, ids, places...)
}

// Census is the queue's key census (jobstore.Censuser).
func (s *Stream) Census(ctx context.Context) (jobstore.Census, error) {
	return s.TakeCensus(ctx, CensusSpec{Locate: s.Locate, Group: StreamGroup})
}
