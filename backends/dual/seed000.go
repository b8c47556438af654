package dual

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Seed variants (off by default): the option "variant"
// (base.OptionVariant) builds, instead of the corrected store, one that
// reproduces a known seed flaw on purpose (see backends/zset's variant.go
// for what a seed variant is).
const (
	// VariantSeed000 is seed 000's mover (Seed000).
	VariantSeed000 = "seed000"
	// VariantAllowed lists the values, for the registry.
	VariantAllowed = base.VariantOff + " or " + VariantSeed000
	// VariantDoc describes the option, for the registry.
	VariantDoc = "seed variant (off by default; reproduces one seed flaw on purpose): seed000 moves due jobs the seed's way, " +
		"a read of the due ids, then per job a ZREM and an XADD in separate commands, and claims what the seed's status check lets through: " +
		"concurrent movers (every claimer in mover mode claim) promote a job twice and it runs twice; a crash between the steps drops it"
)

// Build builds the corrected Store, or the seed variant option "variant" names.
func Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	v, rest, err := base.VariantOption("dual", extra, VariantSeed000)
	if err != nil {
		return nil, err
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
		s.OnDue = nil
		return &Seed000{Store: s}, nil
	}
	return s, nil
}

// Seed000 is a SEED VARIANT, not a job store to use: seed 000's mover
// (ProcessDelayedJobs). It reads the due ids (ZRANGEBYSCORE), then for each
// removes it (ZREM, result unchecked) and adds it to the stream (XADD, with
// the record's Ref: seed000_add.lua) in separate commands. Two movers that
// read the same ids both add them, and the claim (seed000_claim.lua, with
// the seed's status check that lets an InProgress job through) runs the
// job once per entry; a mover that dies after a ZREM and before its XADD
// drops the job. In mover mode "claim" every Claim moves first, so
// concurrent claimers are concurrent movers (seed 000's approach 1); in
// "background" the harness's mover loop calls Promote. Claims poll every
// Options.PollInterval. Leases, fencing and recovery are the corrected ones.
type Seed000 struct{ *Store }

// Capabilities: the corrected dual's, minus blocking claims and strict
// FIFO, plus seed-variant.
func (s *Seed000) Capabilities() jobstore.Capabilities {
	cs := s.Store.Capabilities()
	delete(cs, jobstore.CapBlockingClaim)
	delete(cs, jobstore.CapStrictFIFO)
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// Claim moves (in mover mode claim), then reads and claims, polling while
// req.Wait allows.
func (s *Seed000) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.PollScriptClaim(ctx, req, func(now, deadline time.Time) (any, error) {
		if s.cfg.Mover == MoverClaim {
			if _, err := s.move(ctx, s.cfg.Batch); err != nil {
				return nil, err
			}
		}
		v, err := s.Run(ctx, "seed000_claim", []string{s.Keys.Active(), s.Ready},
			[]string{base.Ms(now), base.Ms(deadline), req.WorkerID, s.TokenBase(), strconv.Itoa(req.Max), s.Consumer})
		if err != nil {
			return nil, fmt.Errorf("dual seed000: %w", err)
		}
		return v, nil
	})
}

// Promote is the seed's mover (jobstore.Mover).
func (s *Seed000) Promote(ctx context.Context, max int) (int, error) {
	if max <= 0 || max > base.MaxClaim {
		return 0, fmt.Errorf("%w: Promote max %d: allowed is 1 to %d", jobstore.ErrInvalid, max, base.MaxClaim)
	}
	if err := s.Check(); err != nil {
		return 0, err
	}
	return s.move(ctx, max)
}

// move reads up to max due members, then removes and adds each in separate
// commands, and reports how many it added.
func (s *Seed000) move(ctx context.Context, max int) (int, error) {
	v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGEBYSCORE"}, Keys: []string{s.delayed},
		Args: []string{"-inf", base.Ms(s.Now()), "LIMIT", "0", strconv.Itoa(max)}})
	if err != nil {
		return 0, fmt.Errorf("dual seed000: read delayed: %w", err)
	}
	moved := 0
	for _, m := range base.Strings(v) {
		if len(m) < 14 {
			continue
		}
		id := m[13:] // "<12 hex digit sequence>:<id>"
		if _, err := s.C.Do(ctx, rclient.Cmd("ZREM", s.delayed, m)); err != nil {
			return moved, fmt.Errorf("dual seed000: remove %s: %w", id, err)
		}
		if _, err := s.Run(ctx, "seed000_add", []string{s.Ready, s.Keys.Job(id)}, []string{id}); err != nil {
			return moved, fmt.Errorf("dual seed000: add %s: %w", id, err)
		}
		moved++
	}
	return moved, nil
}
