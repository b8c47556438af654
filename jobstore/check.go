package jobstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxClaim is the most jobs one Claim may ask for (ClaimRequest.Max), and
// one Recover or Promote may take (CheckMax).
const MaxClaim = 1000

// CheckMax checks the max of a Recover or Promote call (op names it): 1 to
// MaxClaim, else ErrInvalid.
func CheckMax(op string, max int) error {
	if max <= 0 || max > MaxClaim {
		return fmt.Errorf("%w: %s max %d: allowed is 1 to %d", ErrInvalid, op, max, MaxClaim)
	}
	return nil
}

// CheckBatch checks an Enqueue batch against the contract's input rules,
// with one wording for every store: a batch is not empty, every id is set
// and holds no '{', '}' or '|' (they delimit keys and index members),
// MaxRetries is not negative, and a payload is at most o.MaxPayload bytes
// (UTF-8 with the JSON encoding). It returns an error wrapping ErrInvalid
// for the first job that breaks one. Every store calls it first; a store's
// own limits (a floor that refuses delayed jobs) come after.
func CheckBatch(jobs []NewJob, o Options) error {
	if len(jobs) == 0 {
		return fmt.Errorf("%w: Enqueue: no jobs", ErrInvalid)
	}
	for _, j := range jobs {
		if err := CheckJob(j, o); err != nil {
			return err
		}
	}
	return nil
}

// CheckJob is CheckBatch's check of one job.
func CheckJob(j NewJob, o Options) error {
	switch {
	case j.ID == "":
		return fmt.Errorf("%w: NewJob.ID: must not be empty", ErrInvalid)
	case strings.ContainsAny(j.ID, "{}|"):
		return fmt.Errorf("%w: NewJob.ID %q: must not contain '{', '}' or '|'", ErrInvalid, j.ID)
	case j.MaxRetries < 0:
		return fmt.Errorf("%w: NewJob.MaxRetries %d for job %q: must be >= 0", ErrInvalid, j.MaxRetries, j.ID)
	case o.MaxPayload > 0 && len(j.Payload) > o.MaxPayload:
		return fmt.Errorf("%w: NewJob.Payload of job %q is %d bytes: at most Options.MaxPayload = %d allowed", ErrInvalid, j.ID, len(j.Payload), o.MaxPayload)
	case o.Encoding == EncodingJSON && !utf8.Valid(j.Payload):
		return fmt.Errorf("%w: NewJob.Payload of job %q: the json encoding takes UTF-8 payloads only", ErrInvalid, j.ID)
	}
	return nil
}

// Check checks a ClaimRequest against the contract: Max from 1 to
// MaxClaim, a positive Lease, a Wait of zero or more.
func (r ClaimRequest) Check() error {
	switch {
	case r.Max <= 0 || r.Max > MaxClaim:
		return fmt.Errorf("%w: ClaimRequest.Max %d: allowed is 1 to %d", ErrInvalid, r.Max, MaxClaim)
	case r.Lease <= 0:
		return fmt.Errorf("%w: ClaimRequest.Lease %v: must be positive", ErrInvalid, r.Lease)
	case r.Wait < 0:
		return fmt.Errorf("%w: ClaimRequest.Wait %v: must be >= 0", ErrInvalid, r.Wait)
	}
	return nil
}

// Check checks a Lease presented to Extend, Complete or Fail: the one
// Claim returned, with its job id and token.
func (l Lease) Check() error {
	if l.JobID == "" || l.Token == "" {
		return fmt.Errorf("%w: Lease: JobID and Token must be set (use the Lease Claim returned)", ErrInvalid)
	}
	return nil
}
