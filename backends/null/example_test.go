package null_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aebench/aebench/backends/null"
	"github.com/aebench/aebench/jobstore"
)

// The contract in a few calls, on the in-process calibration store (no
// Redis): enqueue, claim under a lease, complete, and a second Complete of
// the same lease fenced.
func Example() {
	ctx := context.Background()
	s, err := null.New(jobstore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if err := s.Enqueue(ctx, jobstore.NewJob{ID: "job-1", Payload: []byte("hello")}); err != nil {
		fmt.Println(err)
		return
	}
	got, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w1", Max: 10, Lease: 30 * time.Second})
	if err != nil || len(got) != 1 {
		fmt.Println(len(got), err)
		return
	}
	fmt.Println("claimed", got[0].Job.ID, string(got[0].Job.Payload))
	fmt.Println("complete:", s.Complete(ctx, got[0].Lease, nil))
	fmt.Println("again:", s.Complete(ctx, got[0].Lease, nil))
	fmt.Println("bad request:", s.Enqueue(ctx))
	// Output:
	// claimed job-1 hello
	// complete: <nil>
	// again: jobstore: lease lost (job recovered or taken over): "job-1"
	// bad request: jobstore: invalid argument: Enqueue: no jobs
}
