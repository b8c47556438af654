package base

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// Seed variants: a backend's option OptionVariant builds, instead of the
// corrected store, one that reproduces a known flaw of a seed design on
// purpose (see backends/zset's variant.go). These helpers are what the
// variants of several backends share.
const (
	OptionVariant = "variant"
	// VariantOff is the corrected store, the default.
	VariantOff = "off"
)

// VariantOption reads OptionVariant from extra: "" or VariantOff give
// VariantOff; a value not in allowed is an ErrInvalid error naming the
// key. rest is extra without the option, for the backend's own parsing.
func VariantOption(backend string, extra map[string]string, allowed ...string) (variant string, rest map[string]string, err error) {
	rest = maps.Clone(extra)
	delete(rest, OptionVariant)
	v := extra[OptionVariant]
	if v == "" || v == VariantOff {
		return VariantOff, rest, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, rest, nil
		}
	}
	return "", nil, fmt.Errorf("%w: backend %s: option %s %q: allowed are %s", jobstore.ErrInvalid, backend, OptionVariant, v,
		VariantOff+", "+strings.Join(allowed, ", "))
}

// PollScriptClaim is the claim of a variant whose claim is one script
// call: it checks req, then calls run (the script, at the store's now, with
// leases or processing markers ending at deadline) every
// Options.PollInterval until it returns work or req.Wait runs out, and
// returns the claimed jobs oldest RunAt first, as the corrected claims do.
func (c *Core) PollScriptClaim(ctx context.Context, req jobstore.ClaimRequest, run func(now, deadline time.Time) (any, error)) ([]jobstore.Claimed, error) {
	if err := ValidateClaim(req); err != nil {
		return nil, err
	}
	return c.PollClaim(ctx, req.Wait, func() ([]jobstore.Claimed, error) {
		if err := c.Check(); err != nil {
			return nil, err
		}
		now := c.Now()
		deadline := now.Add(req.Lease)
		v, err := run(now, deadline)
		if err != nil {
			return nil, err
		}
		got, err := DecodeClaimedRecords(v, req.WorkerID, now, deadline)
		sort.SliceStable(got, func(i, j int) bool { return got[i].Job.RunAt.Before(got[j].Job.RunAt) })
		return got, err
	})
}

// CompleteEach completes each lease with complete, one call each: the
// CompleteMany of a variant whose Complete is its own.
func CompleteEach(ctx context.Context, cs []jobstore.Completion, complete func(context.Context, jobstore.Lease, []byte) error) ([]error, error) {
	errs := make([]error, len(cs))
	for i, c := range cs {
		errs[i] = complete(ctx, c.Lease, c.Result)
	}
	return errs, nil
}
