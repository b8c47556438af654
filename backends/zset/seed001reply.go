package zset

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/backends/internal/base"
)

// ErrJobConstruction is what a claim of variant seed001-reply returns after
// its script claimed the job: the seed's JOB_CONSTRUCTION_ERROR (seed 001
// line 424), raised when its parser reads the claim's reply.
var ErrJobConstruction = errors.New("zset seed001-reply: JOB_CONSTRUCTION_ERROR: the claim's reply could not be parsed (seed 001 lines 386-420)")

// seed001Job is what the seed's parser builds of a claim's reply: the
// fields it parses, each from the index the seed reads it at.
type seed001Job struct {
	ID, Name, Payload                   string
	Status, RetryCount, MaxRetries      int
	CreatedAt, StartedAt, LastUpdatedAt time.Time
	RetryDelayUntil, CompletedAt        *time.Time
}

// parseSeed001Reply is the seed's parser of ClaimSingleJob's reply (seed
// 001 lines 386-420), index for index. The script (lines 355-360) returns
// currentWorkerId at index 12, between RetryDelayUntil and CreatedAt, which
// the parser does not read: from index 12 on it reads every date one place
// early. CreatedAt is parsed from index 12, the WorkerId, which is empty
// on every claim that got this far (the script refused any other, line
// 317), so DateTimeOffset.Parse("") throws and every claim fails after the
// script marked the job InProgress and took it out of the queue. A date
// parses as the record's milliseconds (the variant's dates; the seed's are
// ISO 8601); the empty string fails either way.
func parseSeed001Reply(v any) (seed001Job, error) {
	r := base.Strings(v)
	if len(r) < 16 {
		return seed001Job{}, fmt.Errorf("%w: %d values, the parser reads 16", ErrJobConstruction, len(r))
	}
	var j seed001Job
	var err error
	j.ID, j.Name, j.Payload = r[0], r[1], r[6]
	if j.Status, err = seedInt(r[2], "Status"); err != nil {
		return j, err
	}
	if j.RetryCount, err = seedInt(r[9], "RetryCount"); err != nil {
		return j, err
	}
	if j.MaxRetries, err = seedInt(r[10], "MaxRetries"); err != nil {
		return j, err
	}
	if j.RetryDelayUntil, err = seedOptionalDate(r[11], "RetryDelayUntil"); err != nil {
		return j, err
	}
	if j.CreatedAt, err = seedDate(r[12], "CreatedAt"); err != nil {
		return j, err
	}
	if j.StartedAt, err = seedDate(r[13], "StartedAt"); err != nil {
		return j, err
	}
	if j.CompletedAt, err = seedOptionalDate(r[14], "CompletedAt"); err != nil {
		return j, err
	}
	j.LastUpdatedAt, err = seedDate(r[15], "LastUpdatedAt")
	return j, err
}

// seedInt is int.Parse: an empty or non-numeric value throws.
func seedInt(s, field string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: int.Parse(%q) throws", ErrJobConstruction, field, s)
	}
	return n, nil
}

// seedDate is DateTimeOffset.Parse: an empty value throws.
func seedDate(s, field string) (time.Time, error) {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s: DateTimeOffset.Parse(%q) throws", ErrJobConstruction, field, s)
	}
	return time.UnixMilli(ms), nil
}

// seedOptionalDate is the seed's "string.IsNullOrEmpty(x) ? null : Parse(x)".
func seedOptionalDate(s, field string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := seedDate(s, field)
	return &t, err
}
