package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptSeed003Claim         = base.NewScript("seed003_claim")
	scriptSeed003Complete      = base.NewScript("seed003_complete")
	scriptSeed003Fail          = base.NewScript("seed003_fail")
	scriptSeed003MaxlenEnqueue = base.NewScript("seed003_maxlen_enqueue")
	scriptSeed003Readd         = base.NewScript("seed003_readd")
)

// Seed variants (off by default): the option "variant"
// (base.OptionVariant) builds, instead of the corrected store, one that
// reproduces a known seed flaw on purpose (see backends/zset's variant.go
// for what a seed variant is).
const (
	// VariantSeed003 acknowledges entries at claim time (Seed003).
	VariantSeed003 = "seed003"
	// VariantSeed003MaxLen trims the stream with MAXLEN (Seed003MaxLen).
	VariantSeed003MaxLen = "seed003-maxlen"
	// VariantAllowed lists the values, for the registry.
	VariantAllowed = base.VariantOff + ", " + VariantSeed003 + " or " + VariantSeed003MaxLen
	// VariantDoc describes the option, for the registry.
	VariantDoc = "seed variant (off by default; reproduces one seed flaw on purpose): seed003 acknowledges (XACK) each entry at claim time, " +
		"as seeds 003 and 000 do, with no lease: a worker crash after the claim loses the job, the PEL no longer protects it; " +
		"seed003-maxlen appends with XADD MAXLEN ~ <option maxlen> (default 1000), the trimming seed 003 recommends: past that backlog, entries not yet read are deleted and their jobs lost"
	// OptionMaxLen is Seed003MaxLen's MAXLEN.
	OptionMaxLen = "maxlen"
	// DefaultMaxLen is OptionMaxLen's default.
	DefaultMaxLen = 1000
)

// Build builds the corrected Store, or the seed variant option "variant" names.
func Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	v, rest, err := base.VariantOption("stream", extra, VariantSeed003, VariantSeed003MaxLen)
	if err != nil {
		return nil, err
	}
	maxLen := DefaultMaxLen
	if m, ok := rest[OptionMaxLen]; ok {
		n, err := strconv.Atoi(m)
		if err != nil || n < 1 || v != VariantSeed003MaxLen {
			return nil, fmt.Errorf("%w: backend stream: option %s %q: allowed is a whole number >= 1, with variant %s only",
				jobstore.ErrInvalid, OptionMaxLen, m, VariantSeed003MaxLen)
		}
		maxLen = n
	}
	s, err := New(ctx, c, o)
	if err == nil && v != base.VariantOff {
		// The seed's claimers block in XREADGROUP BLOCK, and its enqueue
		// hands nothing over (base's Handoff).
		s.Marker = ""
	}
	switch {
	case err != nil:
		return nil, err
	case v == VariantSeed003:
		s.Seeded = true
		return &Seed003{Store: s}, nil
	case v == VariantSeed003MaxLen:
		return &Seed003MaxLen{Store: s, maxLen: strconv.Itoa(maxLen)}, nil
	}
	return s, nil
}

// Seed003 is a SEED VARIANT, not a job store to use: the stream claim of
// seeds 003 and 000, which acknowledges each entry (XACK) in the claim
// script (seed003_claim.lua) and keeps no lease: the pending entries list
// no longer holds a claimed job, so a worker that crashes after its claim
// loses the job, since recovery (the corrected one: the active index, then
// the PEL's orphans) finds nothing to take back. Extend renews nothing;
// Complete and Fail check no lease (there is none). Claims poll every
// Options.PollInterval.
type Seed003 struct{ *Store }

var _ jobstore.BatchCompleter = (*Seed003)(nil)

// Capabilities: a seed variant without fencing or lease recovery, whose
// claims poll.
func (s *Seed003) Capabilities() jobstore.Capabilities {
	cs := jobstore.Capabilities{jobstore.CapBatchComplete: true}.WithCore()
	delete(cs, jobstore.CapFencing)
	delete(cs, jobstore.CapLeaseRecovery)
	delete(cs, jobstore.CapUniqueIDs) // CreateJob has no check (Enqueue)
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// Claim reads and acknowledges up to req.Max entries, polling while req.Wait allows.
func (s *Seed003) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.PollScriptClaim(ctx, req, func(now, deadline time.Time) (any, error) {
		v, err := s.Run(ctx, scriptSeed003Claim, []string{s.Ready, s.Keys.Processing()},
			[]string{base.Ms(now), base.Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max), s.Consumer})
		if err != nil {
			return nil, fmt.Errorf("stream seed003: %w", err)
		}
		return v, nil
	})
}

// Enqueue stores the jobs as the corrected enqueue does (a batch checked
// and stored whole). A batch with a job that exists already, which the
// corrected store refuses with ErrDuplicateID, is created one job at a
// time as seed 003's CreateJob does, and the job that exists is created
// again the seed's way: a second entry, with no check (seed003_readd).
func (s *Seed003) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	err := s.Store.Enqueue(ctx, jobs...)
	if !errors.Is(err, jobstore.ErrDuplicateID) {
		return err
	}
	for _, j := range jobs {
		err := s.Store.Enqueue(ctx, j)
		if errors.Is(err, jobstore.ErrDuplicateID) {
			at := "0" // due: the seed's entry carries no RunAt
			if !j.RunAt.IsZero() {
				at = base.Ms(j.RunAt)
			}
			_, err = s.Run(ctx, scriptSeed003Readd, []string{s.Ready}, []string{j.ID, at})
		}
		if err != nil {
			return fmt.Errorf("stream seed003: %w", err)
		}
	}
	return nil
}

// Extend renews nothing: the claim granted no lease.
func (s *Seed003) Extend(_ context.Context, l jobstore.Lease, _ time.Duration) (jobstore.Lease, error) {
	return l, base.ValidateLease(l)
}

// Complete marks the job Completed and deletes its entry, checking no lease.
func (s *Seed003) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.CompleteWith(ctx, scriptSeed003Complete, l, result, []string{s.Ready, s.Keys.Processing()})
}

// CompleteMany completes each lease as Complete does.
func (s *Seed003) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return base.CompleteEach(ctx, cs, s.Complete)
}

// Fail retries or dead-letters, checking no lease.
func (s *Seed003) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.FailWith(ctx, scriptSeed003Fail, l, reason, func(time.Time) []string { return []string{s.Ready, s.Keys.Processing()} })
}

// Stats counts the queue: InProgress from the processing ZSET (the PEL
// holds no claimed job), Due the stream's entries neither pending nor
// claimed (a claimed entry stays in the stream, acknowledged, until
// Complete deletes it).
func (s *Seed003) Stats(ctx context.Context) (jobstore.Stats, error) {
	if err := s.Check(); err != nil {
		return jobstore.Stats{}, err
	}
	n, err := s.Counts(ctx, rclient.Cmd("ZCARD", s.Keys.Processing()))
	if err != nil {
		return jobstore.Stats{}, fmt.Errorf("stream seed003: %w", err)
	}
	return jobstore.Stats{Due: n.Entries - n.Pending - n.Extra[0], InProgress: n.Extra[0] + n.Pending, Dead: n.Dead, Completed: n.Completed}, nil
}

// Seed003MaxLen is a SEED VARIANT, not a job store to use: the corrected
// stream store whose Enqueue appends with XADD MAXLEN ~ N
// (seed003_maxlen_enqueue.lua), the "built-in mechanism to control memory
// usage" seed 003 lists among the stream's advantages (line 256 of
// shared/seeds/003_d241bc79c704dc55.txt). On a consumer group's stream a
// trim deletes the oldest entries whether or not the group has read them:
// once the backlog passes N (rounded up to Redis's node of 100 entries, as
// "~" allows), entries not yet delivered are deleted and their jobs are in
// no queue (lost, "Queued" in no queue). Everything else is the corrected
// stream store's, whose claim leases a job in the call that reads its
// entry, so a trim of entries already read loses nothing. Stats counts the
// lost entries as no longer waiting (base.StreamCounts.Unread: the group's
// lag still counts them, XLEN does not).
type Seed003MaxLen struct {
	*Store
	maxLen string
}

// Capabilities: the corrected store's, plus seed-variant.
func (s *Seed003MaxLen) Capabilities() jobstore.Capabilities {
	cs := s.Store.Capabilities()
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// Enqueue stores jobs and appends each to the stream, trimming it to about
// maxLen entries.
func (s *Seed003MaxLen) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	return s.EnqueueWith(ctx, scriptSeed003MaxlenEnqueue, []string{s.Ready}, []string{s.maxLen}, jobs)
}
