package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aebench/aebench/jobstore"
)

func wantErrIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want errors.Is(err, %v)", what, err, target)
	}
}

func ids(cl []jobstore.Claimed) []string {
	out := make([]string, len(cl))
	for i, c := range cl {
		out[i] = c.Job.ID
	}
	return out
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}

// diffJob lists the fields that differ between a and b, skipping the named ones.
func diffJob(a, b jobstore.Job, skip ...string) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		if slices.Contains(skip, name) {
			continue
		}
		x, y := va.Field(i).Interface(), vb.Field(i).Interface()
		if !sameValue(x, y) {
			out = append(out, fmt.Sprintf("%s: %s != %s", name, show(x), show(y)))
		}
	}
	return out
}

func sameValue(x, y any) bool {
	switch xv := x.(type) {
	case time.Time:
		return xv.Equal(y.(time.Time))
	case []byte:
		return bytes.Equal(xv, y.([]byte))
	}
	rx, ry := reflect.ValueOf(x), reflect.ValueOf(y)
	if rx.Kind() == reflect.Map && rx.Len() == 0 && ry.Len() == 0 {
		return true // nil and empty maps are the same record
	}
	return reflect.DeepEqual(x, y)
}

func show(v any) string {
	switch x := v.(type) {
	case time.Time:
		if x.IsZero() {
			return "zero"
		}
		return x.Format("15:04:05.000")
	case []byte:
		if len(x) > 40 {
			return fmt.Sprintf("%q...(%d bytes)", x[:40], len(x))
		}
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%v", v)
}

// claimView names the fields a Claimed.Job must hold (jobstore's Claimed):
// what a worker needs and what the claim wrote.
var claimView = []string{"ID", "Name", "Payload", "RetryCount", "Status", "WorkerID", "StartedAt",
	"LastUpdatedAt", "LeaseToken", "LeaseDeadline"}

// diffClaimed lists the fields in which a claimed job differs from the
// record Get read right after the claim: every claim-view field, and any
// other the store chose to fill (a zero one it left out). Ref is the
// backend's own and not compared.
func diffClaimed(cj, got jobstore.Job) []string {
	skip := []string{"Ref"}
	v := reflect.ValueOf(cj)
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if !slices.Contains(claimView, name) && v.Field(i).IsZero() {
			skip = append(skip, name)
		}
	}
	return diffJob(cj, got, skip...)
}

// diffNewJob lists the producer's fields that did not survive into j.
func diffNewJob(j jobstore.Job, nj jobstore.NewJob) []string {
	want := jobstore.Job{
		ID: nj.ID, Name: nj.Name, Payload: nj.Payload, MaxRetries: nj.MaxRetries,
		Headers: nj.Headers, RouteParams: nj.RouteParams, QueryParams: nj.QueryParams, RunAt: nj.RunAt,
	}
	got := jobstore.Job{
		ID: j.ID, Name: j.Name, Payload: j.Payload, MaxRetries: j.MaxRetries,
		Headers: j.Headers, RouteParams: j.RouteParams, QueryParams: j.QueryParams, RunAt: j.RunAt,
	}
	if nj.RunAt.IsZero() {
		got.RunAt = time.Time{}
	}
	return diffJob(got, want)
}

// nonSortedIDs returns n random ids whose order is neither ascending nor
// descending, so a store that orders by id cannot pass as FIFO.
func nonSortedIDs(n int) []string {
	for {
		out := make([]string, n)
		for i := range out {
			out[i] = "fifo-" + randHex(8)
		}
		desc := slices.Clone(out)
		slices.Reverse(desc)
		if !slices.IsSorted(out) && !slices.IsSorted(desc) {
			return out
		}
	}
}
