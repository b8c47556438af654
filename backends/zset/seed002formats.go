package zset

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

// AuditUnreadable is the audit count of dead-lettered records that seed
// 001's reader cannot parse (Store.Audit, every zset store alike).
const AuditUnreadable = "unreadable_records"

// ErrUnreadable is Get's error, in variant seed002-formats, for a record
// seed 001's HashToJob would throw on.
var ErrUnreadable = errors.New("zset seed002-formats: seed 001's HashToJob throws on this record (DateTime.Parse of a Unix number, seed 001 lines 84 and 89)")

// seed001Dates are the record's date fields that seed 002's recovery
// writes and seed 001's HashToJob parses.
var seed001Dates = []string{"RetryDelayUntil", "LastUpdatedAt"}

// seed001Date is seed 001's rule for a date field, on this harness's
// records: the seed writes dates as ISO 8601 (ToString("O")) and parses
// them with DateTime.Parse; the records here keep dates as milliseconds
// since the epoch, 13 digits, which stand for the seed's ISO strings (as
// seed001reply.go's parser takes them). Seed 002's recovery writes Unix
// seconds, 10 digits, which DateTime.Parse throws on: here, anything but
// milliseconds fails. Empty is null (RetryDelayUntil's IsNullOrEmpty).
func seed001Date(field, v string) error {
	if v == "" {
		return nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err != nil || ms < 1e12 {
		return fmt.Errorf("%w: %s %q", ErrUnreadable, field, v)
	}
	return nil
}

// seed001Readable reads the record of id as seed 001's HashToJob would
// read its dates; a missing record or field passes (nothing to parse).
func (s *Store) seed001Readable(ctx context.Context, id string) error {
	v, err := s.C.Do(ctx, rclient.Cmd("HMGET", s.Keys.Job(id), seed001Dates...))
	if err != nil {
		return err
	}
	for i, f := range base.Strings(v) {
		if err := seed001Date(seed001Dates[i], f); err != nil {
			return err
		}
	}
	return nil
}

// Audit adds AuditUnreadable to the audit counts: the dead-lettered records
// (nothing rewrites them) whose dates seed 001's reader cannot parse, read
// the same way for the corrected store and the variants.
func (s *Store) Audit(ctx context.Context) (map[string]int64, error) {
	m, err := s.AuditCounts(ctx)
	if err != nil || s.Opts.Encoding == jobstore.EncodingJSON {
		return m, err
	}
	v, err := s.C.Do(ctx, rclient.Cmd("ZRANGE", s.Keys.Dead(), "0", "-1"))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for _, id := range base.Strings(v) {
		err := s.seed001Readable(ctx, id)
		switch {
		case errors.Is(err, ErrUnreadable):
			m[AuditUnreadable]++
		case err != nil:
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
	return m, nil
}

// Get reads the job, and in variant seed002-formats first reads its dates
// as seed 001's GetJobById (HashToJob) would: a record seed 002's recovery
// wrote fails with ErrUnreadable.
func (s *Seed002) Get(ctx context.Context, id string) (jobstore.Job, error) {
	if s.formats && s.Opts.Encoding != jobstore.EncodingJSON {
		if err := s.seed001Readable(ctx, id); err != nil {
			return jobstore.Job{}, err
		}
	}
	return s.Store.Get(ctx, id)
}
