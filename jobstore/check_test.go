package jobstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aebench/aebench/jobstore"
)

func TestCheckBatch(t *testing.T) {
	o := jobstore.Options{MaxPayload: 4}
	for _, tc := range []struct {
		name string
		jobs []jobstore.NewJob
		ok   bool
	}{
		{"one job", []jobstore.NewJob{{ID: "a"}}, true},
		{"empty batch", nil, false},
		{"empty id", []jobstore.NewJob{{ID: ""}}, false},
		{"a brace in the id", []jobstore.NewJob{{ID: "a{b"}}, false},
		{"a bar in the id", []jobstore.NewJob{{ID: "a|b"}}, false},
		{"negative MaxRetries", []jobstore.NewJob{{ID: "a", MaxRetries: -1}}, false},
		{"payload over MaxPayload", []jobstore.NewJob{{ID: "a", Payload: []byte("12345")}}, false},
		{"the second job bad", []jobstore.NewJob{{ID: "a"}, {ID: ""}}, false},
	} {
		err := jobstore.CheckBatch(tc.jobs, o)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, jobstore.ErrInvalid)) {
			t.Errorf("%s: CheckBatch = %v", tc.name, err)
		}
	}
}

// A claim request outside the contract's limits is refused in one
// wording by every store.
func ExampleClaimRequest_Check() {
	for _, r := range []jobstore.ClaimRequest{
		{Max: 10, Lease: 30 * time.Second},
		{Max: 0, Lease: 30 * time.Second},
		{Max: 10, Lease: 30 * time.Second, Wait: -time.Second},
	} {
		fmt.Println(r.Check())
	}
	// Output:
	// <nil>
	// jobstore: invalid argument: ClaimRequest.Max 0: allowed is 1 to 1000
	// jobstore: invalid argument: ClaimRequest.Wait -1s: must be >= 0
}
