package dual

import (
	"context"
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
	scriptSeed000Enqueue = base.NewScript("seed000_enqueue")
	scriptSeed000Claim   = base.NewScript("seed000_claim")
	scriptSeed000Add     = base.NewScript("seed000_add")
)

// Seed variants (off by default): the option "variant"
// (base.OptionVariant) builds, instead of the corrected store, one that
// reproduces a known seed flaw on purpose (see backends/zset's variant.go
// for what a seed variant is).
const (
	// VariantSeed000 is seed 000's dual queue as the seed writes it (Seed000).
	VariantSeed000 = "seed000"
	// VariantAllowed lists the values, for the registry.
	VariantAllowed = base.VariantOff + " or " + VariantSeed000
	// VariantDoc describes the option, for the registry.
	VariantDoc = "seed variant (off by default; reproduces seed 000's design on purpose): delayed jobs scored in whole seconds and also added to the stream for tracking; " +
		"mover claim (approach 1): every claim first reads the due ids, then per job ZREM and XADD in separate commands, so concurrent movers add a job twice and the seed's claim " +
		"refuses the second entry and leaves it pending; mover background (approach 2): reads up to now + 5 s, and a job not yet due is taken out of the delayed set and never put back"
)

// OptionSeedMover chooses which of seed 000's movers a Seed000 runs:
// approach 1's (the read, then ZREM and XADD per job) or approach 2's (the
// five-second look-ahead). By default mover mode claim runs approach 1
// inside Claim and mover mode background runs approach 2 from Promote;
// approach 1 from Promote puts that mover in a loop of its own, to show a
// crash between its steps apart from approach 2's look-ahead.
const (
	OptionSeedMover = "seed_mover"
	SeedApproach1   = "approach1"
	SeedApproach2   = "approach2"
)

// Audit counts a Seed000 keeps (keys.Keys.Audit), with base.AuditPending.
const (
	AuditDuplicateEntries = "duplicate_entries" // XADDs after a ZREM that removed nothing: another mover had the job
	AuditEarlyPromotions  = "early_promotions"  // promoted entries the claim found not yet due and put back
	AuditTrackingEntries  = "tracking_entries"  // entries added "for tracking" at enqueue
	AuditTrackingBounced  = "tracking_bounced"  // tracking entries a claim read and put back
	AuditRefusedClaims    = "refused_claims"    // entries the claim refused (ALREADY_ASSIGNED, WRONG_STATUS, no record) and left pending
	AuditDroppedNotDue    = "dropped_not_due"   // approach 2: taken out of the delayed set, not due, not moved
)

// Build builds the corrected Store, or the seed variant option "variant" names.
func Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	v, rest, err := base.VariantOption("dual", extra, VariantSeed000)
	if err != nil {
		return nil, err
	}
	sm, hasSM := rest[OptionSeedMover]
	delete(rest, OptionSeedMover)
	if hasSM && (v != VariantSeed000 || (sm != SeedApproach1 && sm != SeedApproach2)) {
		return nil, fmt.Errorf("%w: backend dual: option %s %q: allowed are %s and %s, with variant %s only",
			jobstore.ErrInvalid, OptionSeedMover, sm, SeedApproach1, SeedApproach2, VariantSeed000)
	}
	cfg, err := ParseConfig(rest)
	if err != nil {
		return nil, err
	}
	s, err := NewWith(ctx, c, o, cfg)
	switch {
	case err != nil:
		return nil, err
	case v == VariantSeed000:
		s.OnDue, s.Seeded, s.Marker = nil, true, ""
		ahead := s.cfg.Mover == MoverBackground
		if hasSM {
			ahead = sm == SeedApproach2
		}
		return &Seed000{Store: s, ahead: ahead}, nil
	}
	return s, nil
}

// Seed000 is a SEED VARIANT, not a job store to use: seed 000's dual queue
// (shared/seeds/000_11467894327b6173.txt) as written, where it touches
// delayed jobs:
//   - Enqueue (CreateJob, lines 29-64; seed000_enqueue.lua): a delayed job
//     is Scheduled with RetryDelayUntil = RunAt, scored in whole seconds
//     (line 38) and also added to the stream "for tracking" (lines 41-49).
//   - Claim (ClaimNextJobForWorker, lines 66-200; seed000_claim.lua): in
//     mover mode "claim" it first runs approach 1's mover (lines 202-235):
//     ZRANGEBYSCORE -inf..now in whole seconds, then per id a ZREM whose
//     reply is not looked at and an XADD, in separate commands. Two
//     claimers moving at once both add a job; the seed's claim script runs
//     the first entry and refuses the second (ALREADY_ASSIGNED, line 134)
//     without acknowledging it, so it stays in the PEL: a leak and a
//     wasted claim, not a second run. A job scored in whole seconds is
//     promoted up to a second early; the claim finds it Scheduled and not
//     yet due and puts it back (lines 115-125), until it is due.
//   - Promote (mover mode "background"): approach 2's service (lines
//     396-448): ZRANGEBYSCORE -inf..now+5 s, per id a ZREM (checked), a
//     read of the record, and only if RetryDelayUntil <= now an UpdateJob
//     (Queued) and an XADD. A job due within the next five seconds is
//     taken out of the delayed set and not put back: it is in no queue.
//
// Departures, none of which the flaws shown depend on: a claim handles up
// to its read count of entries in one script (the seed reads one per call);
// each claimed job is leased in the active index, and Extend, Complete,
// Fail, Recover and Stats are the corrected dual's (the seed's recovery
// reads the PEL of a stream nothing writes, lines 241-252, so it recovers
// nothing); the orphan sweep is off, as the seed has none, so the refused
// entries stay pending; entries are deleted where the seed only
// acknowledges them (this variant trims nothing, so the stream
// would otherwise keep every entry; Cancel deletes an unread entry too); enqueue is one atomic call
// per batch. Claims poll every Options.PollInterval. Audit (jobstore.Auditor)
// reports the counts above, kept in Redis as they happen, and the pending
// entries left after the drain.
type Seed000 struct {
	*Store
	ahead bool // Promote runs approach 2 (OptionSeedMover)
	// afterRead, when set, runs between a mover's read of the due ids and
	// its first ZREM: the window in which a second mover reads the same
	// ids (TestSeed000Fidelity runs one there).
	afterRead func()
}

// Capabilities: the corrected dual's, minus blocking claims, strict FIFO
// and exact stats (tracking entries count as due), and minus the delayed
// jobs and retries its movers break (approach 2 drops jobs not yet due;
// whole-second scores make a retry up to a second late; a delayed job
// waits as Scheduled), plus seed-variant.
func (s *Seed000) Capabilities() jobstore.Capabilities {
	cs := s.Store.Capabilities()
	for _, c := range []jobstore.Capability{jobstore.CapBlockingClaim, jobstore.CapStrictFIFO, jobstore.CapExactStats,
		jobstore.CapDelayedJobs, jobstore.CapNativeDelay, jobstore.CapRetries} {
		delete(cs, c)
	}
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// Enqueue stores jobs the seed's way (seed000_enqueue.lua).
func (s *Seed000) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	return s.EnqueueWith(ctx, scriptSeed000Enqueue, []string{s.Ready, s.delayed, s.Keys.Audit()}, nil, jobs)
}

// Claim moves (in mover mode claim), then reads and claims, polling while
// req.Wait allows.
func (s *Seed000) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.PollScriptClaim(ctx, req, func(now, deadline time.Time) (any, error) {
		if s.cfg.Mover == MoverClaim {
			if _, err := s.move(ctx, false); err != nil {
				return nil, err
			}
		}
		v, err := s.Run(ctx, scriptSeed000Claim, []string{s.Keys.Active(), s.Ready, s.delayed, s.Keys.Audit()},
			[]string{base.Ms(now), base.Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max), s.Consumer})
		if err != nil {
			return nil, fmt.Errorf("dual seed000: %w", err)
		}
		return v, nil
	})
}

// Promote is approach 2's mover (jobstore.Mover); max is not used, as the
// seed reads every id in its range.
func (s *Seed000) Promote(ctx context.Context, max int) (int, error) {
	if err := jobstore.CheckMax("Promote", max); err != nil {
		return 0, err
	}
	if err := s.Check(); err != nil {
		return 0, err
	}
	return s.move(ctx, s.ahead)
}

// Recover is the corrected lease recovery without the orphan sweep (the
// seed has none: its entries refused by a claim stay pending).
func (s *Seed000) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	return s.RecoverWith(ctx, base.ScriptStreamRecover, max, s.PlaceKeys)
}

// move is the seed's mover: approach 1 (ahead false: ids due by now in
// whole seconds, ZREM unchecked, XADD) or approach 2 (ahead true: ids due
// by now + 5 s, ZREM checked, the record read, moved only if due). Each
// step is a command of its own, as in the seed. It reports how many it
// added to the stream.
func (s *Seed000) move(ctx context.Context, ahead bool) (int, error) {
	stop := s.Now().Unix()
	if ahead {
		stop += 5 // "a small buffer to account for processing time" (line 404)
	}
	v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGEBYSCORE"}, Keys: []string{s.delayed},
		Args: []string{"-inf", strconv.FormatInt(stop*1000, 10)}})
	if err != nil {
		return 0, fmt.Errorf("dual seed000: read delayed: %w", err)
	}
	if s.afterRead != nil {
		s.afterRead()
	}
	moved, dup, dropped := 0, int64(0), int64(0)
	defer func() {
		// Counted in Redis so every store instance of a run adds to one count.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = s.AddAudit(actx, AuditDuplicateEntries, dup)
		_ = s.AddAudit(actx, AuditDroppedNotDue, dropped)
	}()
	for _, m := range base.Strings(v) {
		id := memberID(m)
		removed, err := s.C.Do(ctx, rclient.Cmd("ZREM", s.delayed, m))
		if err != nil {
			return moved, fmt.Errorf("dual seed000: remove %s: %w", id, err)
		}
		if ahead {
			if base.Int(removed) == 0 {
				continue // line 416
			}
			due, err := s.dueNow(ctx, id)
			if err != nil {
				return moved, err
			}
			if !due {
				dropped++ // lines 425-446: neither moved nor put back
				continue
			}
		}
		if _, err := s.Run(ctx, scriptSeed000Add, []string{s.Ready, s.Keys.Job(id)}, []string{id, boolArg(ahead)}); err != nil {
			return moved, fmt.Errorf("dual seed000: add %s: %w", id, err)
		}
		moved++
		if !ahead && base.Int(removed) == 0 {
			// Counted once the entry is added: another mover had removed
			// the id, and the seed adds it all the same (line 233).
			dup++
		}
	}
	return moved, nil
}

// dueNow is approach 2's check of the record it read (lines 419-426):
// Scheduled or Queued, with no RetryDelayUntil or one not after now.
func (s *Seed000) dueNow(ctx context.Context, id string) (bool, error) {
	j, err := s.Get(ctx, id)
	if errors.Is(err, jobstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dual seed000: read %s: %w", id, err)
	}
	ok := j.Status == jobstore.StatusScheduled || j.Status == jobstore.StatusQueued
	return ok && (j.RetryDelayUntil.IsZero() || !j.RetryDelayUntil.After(s.Now())), nil
}

// memberID is the job id of a delayed member: the seed's members are bare
// ids; the corrected Fail and Recover add "<12 hex digit sequence>:<id>".
func memberID(m string) string {
	if len(m) > 13 && m[12] == ':' && !strings.ContainsFunc(m[:12], func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }) {
		return m[13:]
	}
	return m
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
