// Package record is a job's record in Redis, as the backends write and
// read it: the field names (seed 001's, plus RunAt, the lease and Ref), the
// flat field/value list a new job's record is written with, and the
// decoder of a record read back as a HASH's fields or a JSON string.
package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	// fLease is the lease as one field, "<deadline>|<started>|<token>|<worker>"
	// (lib.lua's lease_field): what a claim writes since 2026-11-27. The four
	// fields it replaced are still read, for records written before and by
	// stores that keep them (floor, zset-json-client).
	fLease = "Lease"
)

// NewPairs is the flat field/value list of a new job's record, without
// Status and Ref (the enqueue script adds those): Extras, then Payload
// (left out when empty) and RunAt.
func NewPairs(j jobstore.NewJob, runAt, now time.Time) ([]string, error) {
	p, err := Extras(j, runAt, now)
	if err != nil {
		return nil, err
	}
	if len(j.Payload) > 0 {
		p = append(p, fPayload, string(j.Payload))
	}
	return append(p, fRunAt, strconv.FormatInt(runAt.UnixMilli(), 10)), nil
}

// Extras is the part of a new job's record beyond Status, Ref,
// Payload and RunAt, which the enqueue layout carries in fixed places (no
// field names sent or parsed for them), as field/value pairs. Empty and
// zero fields are left out (RetryCount 0, MaxRetries 0), and so are three
// that a reader derives: Id (the record's key names it; DecodeRecordOf),
// CreatedAt when it equals RunAt (a job due at once; DecodeRecord reads
// RunAt for it) and LastUpdatedAt, which reads as the latest of the
// record's times. A missing field reads as its zero value, and every field
// not stored is one Redis does not write or send: the record of a 128-byte
// job due at once went from 9 fields to 6 (2026-11-27), then to 4 (Status,
// Ref, RunAt, Payload).
func Extras(j jobstore.NewJob, runAt, now time.Time) ([]string, error) {
	var p []string
	add := func(f, v string) {
		if v != "" {
			p = append(p, f, v)
		}
	}
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
	if j.MaxRetries != 0 {
		add(fMaxRetries, strconv.Itoa(j.MaxRetries))
	}
	if created := now.UnixMilli(); created != runAt.UnixMilli() {
		add(fCreatedAt, strconv.FormatInt(created, 10))
	}
	return p, nil
}

// DecodeOf is DecodeRecord for the record of job id, which need not
// hold its own Id (NewRecordPairs leaves it out).
func DecodeOf(id string, v any) (jobstore.Job, error) {
	j, err := Decode(v)
	if j.ID == "" && !errors.Is(err, jobstore.ErrNotFound) {
		j.ID = id
	}
	return j, err
}

// Decode turns what a script or Get read (a flat HGETALL array or,
// over RESP3, a map for the hash encoding; a JSON string for the JSON
// encoding) into a Job, field by field, with no map in between.
func Decode(v any) (jobstore.Job, error) {
	var d recordDecoder
	switch r := v.(type) {
	case []any:
		if len(r)%2 != 0 {
			return jobstore.Job{}, fmt.Errorf("record: odd field list (%d items)", len(r))
		}
		for i := 0; i < len(r); i += 2 {
			k, _ := r[i].(string)
			s, _ := r[i+1].(string)
			d.set(k, s)
		}
	case map[string]any: // HGETALL over RESP3
		for k, x := range r {
			s, _ := x.(string)
			d.set(k, s)
		}
	case string:
		var rec jsonRecord
		if err := json.Unmarshal([]byte(r), &rec); err != nil {
			return jobstore.Job{}, fmt.Errorf("record: %w", err)
		}
		rec.each(d.set)
	case nil:
		return jobstore.Job{}, jobstore.ErrNotFound
	default:
		return jobstore.Job{}, fmt.Errorf("record: unexpected reply %T", v)
	}
	if d.fields == 0 {
		return jobstore.Job{}, jobstore.ErrNotFound
	}
	if d.j.CreatedAt.IsZero() {
		d.j.CreatedAt = d.j.RunAt // not stored when equal (NewRecordPairs)
	}
	d.j.LastUpdatedAt = latest(d.j.LastUpdatedAt, d.j.CreatedAt, d.j.StartedAt, d.j.CompletedAt)
	return d.j, d.err
}

// latest is the latest of ts: a record's LastUpdatedAt is written only by
// the writes that set no other time (Extend, a retry), so it reads as the
// latest of the times the record holds.
func latest(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// setLease splits a Lease field (fLease) into the Job's lease fields.
func (d *recordDecoder) setLease(s string) {
	parts := strings.SplitN(s, "|", 4)
	if len(parts) != 4 {
		d.err = fmt.Errorf("record field %s: %q is not deadline|started|token|worker", fLease, s)
		return
	}
	j := &d.j
	for i, t := range []*time.Time{&j.LeaseDeadline, &j.StartedAt} {
		if ms := d.num(fLease, parts[i]); ms != 0 {
			*t = time.UnixMilli(ms)
		}
	}
	j.LeaseToken, j.WorkerID = parts[2], parts[3]
}

// recordDecoder fills a Job one stored field at a time.
type recordDecoder struct {
	j      jobstore.Job
	fields int
	err    error
}

func (d *recordDecoder) set(f, s string) {
	d.fields++
	if d.err != nil {
		return
	}
	j := &d.j
	switch f {
	case fID:
		j.ID = s
	case fName:
		j.Name = s
	case fError:
		j.Error = s
	case fWorkerID:
		j.WorkerID = s
	case fLeaseToken:
		j.LeaseToken = s
	case fRefField:
		j.Ref = s
	case fLease:
		d.setLease(s)
	case fPayload:
		j.Payload = []byte(s)
	case fResult:
		j.Result = []byte(s)
	case fStatus:
		j.Status = jobstore.Status(d.num(f, s))
	case fRetryCount:
		j.RetryCount = int(d.num(f, s))
	case fMaxRetries:
		j.MaxRetries = int(d.num(f, s))
	case fHeaders:
		d.json(f, s, &j.Headers)
	case fRouteParams:
		d.json(f, s, &j.RouteParams)
	case fQueryParams:
		d.json(f, s, &j.QueryParams)
	default:
		if t := d.times(j, f); t != nil {
			if ms := d.num(f, s); ms != 0 {
				*t = time.UnixMilli(ms)
			}
		}
	}
}

// times returns the Job's time field stored under f (nil: f is not one).
func (d *recordDecoder) times(j *jobstore.Job, f string) *time.Time {
	switch f {
	case fRetryDelay:
		return &j.RetryDelayUntil
	case fCreatedAt:
		return &j.CreatedAt
	case fStartedAt:
		return &j.StartedAt
	case fCompletedAt:
		return &j.CompletedAt
	case fLastUpdatedAt:
		return &j.LastUpdatedAt
	case fRunAt:
		return &j.RunAt
	case fLeaseDeadline:
		return &j.LeaseDeadline
	}
	return nil
}

func (d *recordDecoder) num(f, s string) int64 {
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		d.err = fmt.Errorf("record field %s: %q is not an integer", f, s)
	}
	return n
}

func (d *recordDecoder) json(f, s string, into any) {
	if s == "" {
		return
	}
	if err := json.Unmarshal([]byte(s), into); err != nil {
		d.err = fmt.Errorf("record field %s: %w", f, err)
	}
}

// jsonRecord is a record of the JSON encoding: every field a string, as
// lib.lua's rec_json.lua writes them.
type jsonRecord struct {
	ID              *string `json:"Id"`
	Name            *string `json:"Name"`
	Status          *string `json:"Status"`
	Headers         *string `json:"Headers"`
	RouteParams     *string `json:"RouteParams"`
	QueryParams     *string `json:"QueryParams"`
	Payload         *string `json:"Payload"`
	Result          *string `json:"Result"`
	Error           *string `json:"Error"`
	RetryCount      *string `json:"RetryCount"`
	MaxRetries      *string `json:"MaxRetries"`
	RetryDelayUntil *string `json:"RetryDelayUntil"`
	WorkerID        *string `json:"WorkerId"`
	CreatedAt       *string `json:"CreatedAt"`
	StartedAt       *string `json:"StartedAt"`
	CompletedAt     *string `json:"CompletedAt"`
	LastUpdatedAt   *string `json:"LastUpdatedAt"`
	RunAt           *string `json:"RunAt"`
	LeaseToken      *string `json:"LeaseToken"`
	LeaseDeadline   *string `json:"LeaseDeadline"`
	Ref             *string `json:"Ref"`
	Lease           *string `json:"Lease"`
}

// each calls set for every field the record holds.
func (r *jsonRecord) each(set func(f, s string)) {
	for _, p := range []struct {
		f string
		v *string
	}{{fID, r.ID}, {fName, r.Name}, {fStatus, r.Status}, {fHeaders, r.Headers}, {fRouteParams, r.RouteParams},
		{fQueryParams, r.QueryParams}, {fPayload, r.Payload}, {fResult, r.Result}, {fError, r.Error},
		{fRetryCount, r.RetryCount}, {fMaxRetries, r.MaxRetries}, {fRetryDelay, r.RetryDelayUntil},
		{fWorkerID, r.WorkerID}, {fCreatedAt, r.CreatedAt}, {fStartedAt, r.StartedAt},
		{fCompletedAt, r.CompletedAt}, {fLastUpdatedAt, r.LastUpdatedAt}, {fRunAt, r.RunAt},
		{fLeaseToken, r.LeaseToken}, {fLeaseDeadline, r.LeaseDeadline}, {fRefField, r.Ref}, {fLease, r.Lease}} {
		if p.v != nil {
			set(p.f, *p.v)
		}
	}
}
