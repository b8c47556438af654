package bucket

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// Scripts this file calls (lua/<name>.lua).
var scriptSeed000Place = base.NewScript("seed000_place")

// Seed variants (off by default): the option "variant"
// (base.OptionVariant) builds, instead of the corrected store, one that
// reproduces a known seed flaw on purpose (see backends/zset's variant.go
// for what a seed variant is).
const (
	// VariantSeed000 is seed 000's approach 3 as the seed writes it (Seed000).
	VariantSeed000 = "seed000"
	// VariantAllowed lists the values, for the registry.
	VariantAllowed = base.VariantOff + " or " + VariantSeed000
	// VariantDoc describes the option, for the registry.
	VariantDoc = "seed variant (off by default; reproduces seed 000's approach 3 on purpose): 5-minute buckets, each job written into its bucket's " +
		"three shared fields (jobId, delayUntil, addedAt), so a bucket keeps only its last job; the background mover adds every field's value to the ready queue, " +
		"timestamps included; the other options are refused with it"
	// Seed000Width is the seed's bucket width (_bucketSizeMinutes, line 459).
	Seed000Width = 5 * time.Minute
)

// AuditBucketOverwrites counts the jobs a Seed000 enqueue overwrote in
// their bucket (jobstore.Auditor), and AuditBogusEntries the values its
// mover added to ready that name no job (the delayUntil and addedAt
// timestamps).
const (
	AuditBucketOverwrites = "bucket_overwrites"
	AuditBogusEntries     = "bogus_entries"
)

// Build builds the corrected Store, or the seed variant option "variant" names.
func Build(ctx context.Context, c rclient.Client, o jobstore.Options, extra map[string]string) (jobstore.Store, error) {
	v, rest, err := base.VariantOption("bucket", extra, VariantSeed000)
	if err != nil {
		return nil, err
	}
	if v == base.VariantOff {
		cfg, err := ParseConfig(rest)
		if err != nil {
			return nil, err
		}
		return NewWith(ctx, c, o, cfg)
	}
	for k, val := range rest {
		return nil, fmt.Errorf("%w: backend bucket: option %s %q with variant %s: the variant runs the seed's own settings (5-minute buckets, a background mover, polling claims); leave %s out",
			jobstore.ErrInvalid, k, val, VariantSeed000, k)
	}
	s, err := NewWith(ctx, c, o, Config{Width: Seed000Width, Mover: MoverBackground, Poll: true})
	if err != nil {
		return nil, err
	}
	return &Seed000{Store: s}, nil
}

// Seed000 is a SEED VARIANT, not a job store to use: seed 000's approach 3,
// TimeBucketRedisJobStore (shared/seeds/000_11467894327b6173.txt, lines
// 452-537), where it touches delayed jobs:
//   - Enqueue (CreateJob, lines 478-491): a delayed job goes into the
//     bucket of its 5-minute window (GetBucketKey, lines 462-467) as three
//     fields, jobId, delayUntil and addedAt: the same three for every job,
//     so each HSET overwrites the job before it and a bucket holds only its
//     last job; the others are in no queue and never run. The bucket's
//     score in the index becomes the last job's RunAt (plain ZADD).
//     (seed000_place.lua, after the corrected enqueue has stored the
//     record: the record's write is the corrected one.)
//   - Promote (ProcessExpiredBuckets, lines 511-535): in separate
//     commands, as the seed: the due buckets (ZRANGE BYSCORE), then per
//     bucket HGETALL and, for every field, the field's value added to the
//     ready queue (the seed's XADD of jobHash.Value, line 523), so the
//     delayUntil and addedAt timestamps go in as job ids too; then DEL and
//     ZREM. The corrected claim skips a ready member that names no record,
//     as the seed's claim skips an id that is not a Guid (seed 003 lines
//     134-137, the stream claim seed 000 reuses).
//
// Departures, none of which the flaws shown depend on: ready is the
// corrected ZSET (the seed's is a stream), scored by the promote time;
// claims poll, and leases, Complete, Fail and Recover are the corrected
// bucket's (retries and cancels use the corrected bucket layout, which
// this mover does not read: the variant declares neither).
type Seed000 struct{ *Store }

var _ jobstore.Auditor = (*Seed000)(nil)

// Capabilities: the corrected store's without delayed jobs, retries,
// cancel and strict FIFO (each broken by the seed's buckets), plus
// seed-variant.
func (s *Seed000) Capabilities() jobstore.Capabilities {
	cs := s.Store.Capabilities()
	for _, c := range []jobstore.Capability{jobstore.CapDelayedJobs, jobstore.CapRetries, jobstore.CapCancel, jobstore.CapStrictFIFO} {
		delete(cs, c)
	}
	cs[jobstore.CapSeedVariant] = true
	return cs
}

// Enqueue stores the jobs the corrected way, then moves each delayed one
// into its bucket's shared fields (seed000_place.lua), one call a job.
func (s *Seed000) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	now := s.Now()
	if err := s.Store.Enqueue(ctx, jobs...); err != nil {
		return err
	}
	for _, j := range jobs {
		runAt := j.RunAt
		if runAt.IsZero() || runAt.UnixMilli() <= now.UnixMilli() {
			continue
		}
		v, err := s.Run(ctx, scriptSeed000Place, []string{s.bucketKey(runAt), s.index, s.bucketed, s.Keys.Job(j.ID)},
			[]string{base.Ms(runAt), base.Ms(now)})
		if err != nil {
			return fmt.Errorf("bucket seed000: place %q: %w", j.ID, err)
		}
		if base.Int(v) == 1 {
			if err := s.AddAudit(ctx, AuditBucketOverwrites, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Promote is the seed's ProcessExpiredBuckets, command by command. It
// returns the number of values it added to ready (timestamps included).
func (s *Seed000) Promote(ctx context.Context, max int) (int, error) {
	if err := s.CheckPromote(max); err != nil {
		return 0, err
	}
	now := s.Now()
	buckets, err := s.dueBuckets(ctx, now, max)
	if err != nil {
		return 0, err
	}
	added := 0
	for _, b := range buckets {
		n, err := s.processBucket(ctx, b, now)
		added += n
		if err != nil {
			return added, err
		}
	}
	return added, nil
}

// processBucket moves one due bucket (lines 518-533).
func (s *Seed000) processBucket(ctx context.Context, bucket string, now time.Time) (int, error) {
	v, err := s.C.Do(ctx, rclient.Cmd("HGETALL", bucket))
	if err != nil {
		return 0, fmt.Errorf("bucket seed000: read %s: %w", bucket, err)
	}
	kv := hashPairs(v)
	added, bogus, jobs := 0, 0, 0
	for i := 1; i < len(kv); i += 2 {
		if _, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZADD"}, Keys: []string{s.ready}, Args: []string{base.Ms(now), kv[i]}}); err != nil {
			return added, fmt.Errorf("bucket seed000: add %q to ready: %w", kv[i], err)
		}
		added++
		if kv[i-1] == "jobId" {
			jobs++
		} else {
			bogus++
		}
	}
	if _, err := s.C.Do(ctx, rclient.Cmd("DEL", bucket)); err != nil {
		return added, fmt.Errorf("bucket seed000: delete %s: %w", bucket, err)
	}
	if _, err := s.C.Do(ctx, rclient.Command{Head: []string{"ZREM"}, Keys: []string{s.index}, Args: []string{bucket}}); err != nil {
		return added, fmt.Errorf("bucket seed000: unindex %s: %w", bucket, err)
	}
	if jobs > 0 {
		if _, err := s.C.Do(ctx, rclient.Command{Head: []string{"DECRBY"}, Keys: []string{s.bucketed}, Args: []string{fmt.Sprint(jobs)}}); err != nil {
			return added, fmt.Errorf("bucket seed000: count: %w", err)
		}
	}
	return added, s.AddAudit(ctx, AuditBogusEntries, int64(bogus))
}

// hashPairs reads an HGETALL reply as field, value pairs: a flat array
// (RESP2) or a map (RESP3), whose order does not matter here.
func hashPairs(v any) []string {
	var out []string
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			out = append(out, k, fmt.Sprint(x))
		}
	case map[any]any:
		for k, x := range m {
			out = append(out, fmt.Sprint(k), fmt.Sprint(x))
		}
	default:
		out = base.Strings(v)
	}
	return out
}

// Locate is the corrected store's, except that a job its bucket holds in
// the seed's jobId field is reachable: the mover will move it.
func (s *Seed000) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	locs, err := s.Store.Locate(ctx, ids)
	if err != nil {
		return locs, err
	}
	for i, l := range locs {
		if !l.Found || l.Reachable {
			continue
		}
		j, err := s.Get(ctx, ids[i])
		if err != nil {
			return locs, err
		}
		bucket, member, ok := strings.Cut(j.Ref, "|")
		if !ok || !strings.HasPrefix(bucket, s.Keys.BucketPrefix()) {
			continue
		}
		v, err := s.C.Do(ctx, rclient.Command{Head: []string{"HGET"}, Keys: []string{bucket}, Args: []string{"jobId"}})
		if err != nil {
			return locs, fmt.Errorf("bucket seed000: locate %q: %w", ids[i], err)
		}
		if b, _ := v.(string); b == member {
			locs[i].Reachable = true
		}
	}
	return locs, nil
}
