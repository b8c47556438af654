package zset

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
	scriptSeed001Claim = base.NewScript("seed001_claim")
	scriptSeed001Fail  = base.NewScript("seed001_fail")
)

// ErrClaimConflict is what a Seed001 claim returns when another claimer took
// the head job it read first: the seed's ALREADY_ASSIGNED (or WRONG_STATUS).
// The harness counts it as a claim error.
var ErrClaimConflict = errors.New("zset seed001: claim conflict: another claimer took the head job first (the seed's ALREADY_ASSIGNED)")

// isoLayout is .NET's round-trip format "O", which the seed writes dates in.
const isoLayout = "2006-01-02T15:04:05.0000000-07:00"

// Seed001 is a SEED VARIANT, not a job store to use: seed 001's hash store
// (shared/seeds/001_3b1d554d8cec89c5.txt) where it differs from the
// corrected one:
//   - Claim: the queue's head is read outside Lua (ZRANGEBYSCORE ... LIMIT
//     0 Max), then each id read is claimed in a script of its own
//     (seed001_claim.lua, the seed's ClaimSingleJob, lines 294-361): every
//     claimer reads the same head, and one that gets none of what it read
//     returns ErrClaimConflict (the seed's ALREADY_ASSIGNED), so claim
//     errors grow with the number of workers (jobstore.CapClaimConflicts).
//     Its retry-delay check (lines 326-331) parses with tonumber() a date
//     the seed writes as ISO 8601, gets nil and never fires; it never needs
//     to, since a retry not yet due is not in the queue (below).
//   - Fail: the seed's UpdateJob (lines 225-287; seed001_fail.lua) puts a
//     Scheduled job back in the queue only when RetryDelayUntil <= now
//     (line 273). A retry with a backoff ahead is put nowhere, and nothing
//     re-adds it: it never runs again. The ledger counts it lost
//     ("Scheduled" in no queue).
//
// It polls every Options.PollInterval. Leases, fencing and recovery are the
// corrected store's: a claim is leased in the active index (the seed's
// claim writes WorkerId and StartedAt only), so this variant shows the two
// flaws above and nothing else.
type Seed001 struct {
	*Store
	// afterRead, when set, runs between a claim's read of the head and its
	// claim script: the window in which another claimer reads the same
	// head (TestSeedVariantFidelity runs one there).
	afterRead func()
	// reply: variant seed001-reply, whose claims parse the seed's reply
	// the seed's way (seed001reply.go) and fail, every one.
	reply bool
}

// Capabilities: a seed variant whose delayed retries never run, whose
// claims conflict, and that is not strict FIFO for retries.
func (s *Seed001) Capabilities() jobstore.Capabilities {
	return withoutCore(jobstore.Capabilities{jobstore.CapNativeDelay: true, jobstore.CapStoreClockLeases: true,
		jobstore.CapExactStats: true, jobstore.CapBatchComplete: true, jobstore.CapClaimConflicts: true}.WithCore(), jobstore.CapRetries)
}

// Claim reads up to req.Max head ids, then claims each in its own call,
// polling while req.Wait allows. Ids another claimer took meanwhile are
// skipped; a claim that got none of them returns ErrClaimConflict.
func (s *Seed001) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	return s.WaitClaim(ctx, req, nil, func(now, deadline time.Time, _ base.Handoff) ([]jobstore.Claimed, time.Time, error) {
		v, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZRANGEBYSCORE"}, Keys: []string{s.queue},
			Args: []string{"-inf", base.Ms(now), "LIMIT", "0", strconv.Itoa(req.Max)}})
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("zset seed001: read head: %w", err)
		}
		if s.afterRead != nil {
			s.afterRead()
		}
		var got []jobstore.Claimed
		var conflict error
		for _, m := range base.Strings(v) {
			c, err := s.claimOne(ctx, m, req.WorkerID, now, deadline)
			switch {
			case errors.Is(err, ErrClaimConflict):
				conflict = err
			case err != nil:
				return got, time.Time{}, err
			default:
				got = append(got, c...)
			}
		}
		if len(got) == 0 && conflict != nil {
			return nil, time.Time{}, conflict
		}
		return got, time.Time{}, nil
	})
}

// claimOne is the seed's ClaimSingleJob of one member read.
func (s *Seed001) claimOne(ctx context.Context, member, worker string, now, deadline time.Time) ([]jobstore.Claimed, error) {
	mode := ""
	if s.reply {
		mode = "reply"
	}
	v, err := s.Run(ctx, scriptSeed001Claim, []string{s.queue, s.Keys.Active()},
		[]string{member, base.Ms(now), base.Ms(deadline), s.TokenBase() + ".1", worker, mode})
	var re *rclient.RedisError
	if errors.As(err, &re) && (strings.Contains(re.Msg, "ALREADY_ASSIGNED") || strings.Contains(re.Msg, "WRONG_STATUS") || strings.Contains(re.Msg, "RETRY_DELAY")) {
		return nil, fmt.Errorf("%w: %s", ErrClaimConflict, re.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("zset seed001: %w", err)
	}
	if arr, ok := v.([]any); s.reply && ok && len(arr) == 4 {
		// The job is claimed (InProgress, out of the queue, leased) whatever
		// the parser makes of the reply: the seed returns only its error.
		if _, err := parseSeed001Reply(arr[3]); err != nil {
			return nil, err
		}
		v = arr[:3]
	}
	return base.DecodeClaimedRecords(v, worker, now, deadline)
}

// Fail schedules a retry the seed's way (back in the queue only when
// already due, else nowhere) or dead-letters, under the lease.
func (s *Seed001) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	if err := base.ValidateLease(l); err != nil {
		return jobstore.FailResult{}, err
	}
	if err := s.Check(); err != nil {
		return jobstore.FailResult{}, err
	}
	now := s.Now()
	runAt := s.RetryAt(now, l.Attempt).Truncate(time.Millisecond)
	keys := []string{s.Keys.Active(), s.Keys.Dead(), s.Keys.Job(l.JobID), s.queue}
	v, err := s.Run(ctx, scriptSeed001Fail, keys, []string{l.JobID, l.Token, base.Ms(now), reason, base.Ms(runAt),
		fmt.Sprint(s.Opts.Retention.Milliseconds()), runAt.UTC().Format(isoLayout)})
	if err != nil {
		return jobstore.FailResult{}, err
	}
	arr, _ := v.([]any)
	if len(arr) != 2 {
		return jobstore.FailResult{}, fmt.Errorf("zset seed001: fail %q: unexpected reply %v", l.JobID, v)
	}
	return jobstore.FailResult{Status: jobstore.Status(base.Int(arr[0])), RunAt: time.UnixMilli(base.Int(arr[1]))}, nil
}
