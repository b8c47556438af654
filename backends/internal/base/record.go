package base

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aebench/aebench/jobstore"
)

// Record field names, as seed 001 names them, plus RunAt, LeaseToken,
// LeaseDeadline and Ref. Times are Unix milliseconds; maps are JSON.
const (
	fID, fName, fStatus                    = "Id", "Name", "Status"
	fHeaders, fRouteParams, fQueryParams   = "Headers", "RouteParams", "QueryParams"
	fPayload, fResult, fError              = "Payload", "Result", "Error"
	fRetryCount, fMaxRetries, fRetryDelay  = "RetryCount", "MaxRetries", "RetryDelayUntil"
	fWorkerID, fCreatedAt, fStartedAt      = "WorkerId", "CreatedAt", "StartedAt"
	fCompletedAt, fLastUpdatedAt, fRunAt   = "CompletedAt", "LastUpdatedAt", "RunAt"
	fLeaseToken, fLeaseDeadline, fRefField = "LeaseToken", "LeaseDeadline", "Ref"
)

// NewRecordPairs is the flat field/value list of a new job's record, without
// Status and Ref (the enqueue script adds those). Empty fields are left out:
// a missing field reads as its zero value, and bytes not stored are bytes not paid for.
func NewRecordPairs(j jobstore.NewJob, runAt, now time.Time) ([]string, error) {
	p := make([]string, 0, 20)
	add := func(f, v string) {
		if v != "" {
			p = append(p, f, v)
		}
	}
	add(fID, j.ID)
	add(fName, j.Name)
	for _, m := range []struct {
		f string
		v any
		n int
	}{{fHeaders, j.Headers, len(j.Headers)}, {fRouteParams, j.RouteParams, len(j.RouteParams)}, {fQueryParams, j.QueryParams, len(j.QueryParams)}} {
		if m.n == 0 {
			continue
		}
		b, err := json.Marshal(m.v)
		if err != nil {
			return nil, fmt.Errorf("%w: job %q %s: %v", jobstore.ErrInvalid, j.ID, m.f, err)
		}
		add(m.f, string(b))
	}
	add(fPayload, string(j.Payload))
	add(fRetryCount, "0")
	add(fMaxRetries, strconv.Itoa(j.MaxRetries))
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	add(fCreatedAt, ms)
	add(fLastUpdatedAt, ms)
	add(fRunAt, strconv.FormatInt(runAt.UnixMilli(), 10))
	return p, nil
}

// DecodeRecord turns what rec_read returned (a flat HGETALL array for the
// hash encoding, a JSON string for the JSON encoding) into a Job.
func DecodeRecord(v any) (jobstore.Job, error) {
	m := map[string]string{}
	switch r := v.(type) {
	case []any:
		if len(r)%2 != 0 {
			return jobstore.Job{}, fmt.Errorf("record: odd field list (%d items)", len(r))
		}
		for i := 0; i < len(r); i += 2 {
			k, _ := r[i].(string)
			s, _ := r[i+1].(string)
			m[k] = s
		}
	case map[string]any: // HGETALL over RESP3
		for k, x := range r {
			s, _ := x.(string)
			m[k] = s
		}
	case string:
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			return jobstore.Job{}, fmt.Errorf("record: %w", err)
		}
	case nil:
		return jobstore.Job{}, jobstore.ErrNotFound
	default:
		return jobstore.Job{}, fmt.Errorf("record: unexpected reply %T", v)
	}
	if len(m) == 0 {
		return jobstore.Job{}, jobstore.ErrNotFound
	}
	return fromFields(m)
}

func fromFields(m map[string]string) (jobstore.Job, error) {
	var j jobstore.Job
	var err error
	num := func(f string) int64 {
		s := m[f]
		if s == "" || err != nil {
			return 0
		}
		n, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("record %q field %s: %q is not an integer", m[fID], f, s)
		}
		return n
	}
	tm := func(f string) time.Time {
		if ms := num(f); ms != 0 {
			return time.UnixMilli(ms)
		}
		return time.Time{}
	}
	js := func(f string, into any) {
		if s := m[f]; s != "" && err == nil {
			if e := json.Unmarshal([]byte(s), into); e != nil {
				err = fmt.Errorf("record %q field %s: %w", m[fID], f, e)
			}
		}
	}
	j.ID, j.Name, j.Error = m[fID], m[fName], m[fError]
	j.Status = jobstore.Status(num(fStatus))
	js(fHeaders, &j.Headers)
	js(fRouteParams, &j.RouteParams)
	js(fQueryParams, &j.QueryParams)
	if s, ok := m[fPayload]; ok {
		j.Payload = []byte(s)
	}
	if s, ok := m[fResult]; ok {
		j.Result = []byte(s)
	}
	j.RetryCount = int(num(fRetryCount))
	j.MaxRetries = int(num(fMaxRetries))
	j.RetryDelayUntil = tm(fRetryDelay)
	j.WorkerID = m[fWorkerID]
	j.CreatedAt, j.StartedAt, j.CompletedAt = tm(fCreatedAt), tm(fStartedAt), tm(fCompletedAt)
	j.LastUpdatedAt, j.RunAt = tm(fLastUpdatedAt), tm(fRunAt)
	j.LeaseToken, j.LeaseDeadline, j.Ref = m[fLeaseToken], tm(fLeaseDeadline), m[fRefField]
	return j, err
}
