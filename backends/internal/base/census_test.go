package base_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/bucket"
	"github.com/aebench/aebench/backends/dual"
	"github.com/aebench/aebench/backends/internal/base/basetest"
	"github.com/aebench/aebench/backends/internal/keys"
	"github.com/aebench/aebench/backends/stream"
	"github.com/aebench/aebench/backends/zset"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
)

type censusStore interface {
	jobstore.Store
	jobstore.Censuser
}

// TestCensusFindsPlantedLeaks runs each strategy clean, checks that its
// census finds no leak, then plants each kind of leak the strategy can
// have and checks that the census names every one.
func TestCensusFindsPlantedLeaks(t *testing.T) {
	c := basetest.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		open   func(context.Context, rclient.Client, jobstore.Options) (censusStore, error)
		stream bool // a stream and its consumer group
		bucket bool // time buckets
	}{
		{"zset", func(ctx context.Context, c rclient.Client, o jobstore.Options) (censusStore, error) {
			return zset.New(ctx, c, o)
		}, false, false},
		{"bucket", func(ctx context.Context, c rclient.Client, o jobstore.Options) (censusStore, error) {
			return bucket.New(ctx, c, o)
		}, false, true},
		{"stream", func(ctx context.Context, c rclient.Client, o jobstore.Options) (censusStore, error) {
			return stream.New(ctx, c, o)
		}, true, false},
		{"dual", func(ctx context.Context, c rclient.Client, o jobstore.Options) (censusStore, error) {
			return dual.New(ctx, c, o)
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := "census-" + tc.name + strconv.FormatInt(time.Now().UnixNano(), 36)
			s, err := tc.open(ctx, c, jobstore.Options{Queue: q})
			if err != nil {
				t.Fatal(err)
			}
			k := keys.New(q)
			cl := run(t, s, 4)
			if err := s.Complete(ctx, cl[0].Lease, nil); err != nil {
				t.Fatal(err)
			}
			clean := census(t, s)
			if clean.LeakCount() != 0 || clean.Records != 4 || clean.Open != 3 || clean.Kept != 1 {
				t.Fatalf("clean run: census %+v, want 4 records (3 open, 1 kept) and no leak", clean)
			}

			want := map[string]int64{jobstore.LeakIndexNoRecord: 1, jobstore.LeakRecordNoIndex: 1, jobstore.LeakNeverExpires: 1, jobstore.LeakExpiredPresent: 1}
			do(t, c, "ZADD", k.Active(), "1", "ghost|tok")                   // an index entry, no record
			do(t, c, "ZREM", k.Active(), cl[1].Job.ID+"|"+cl[1].Lease.Token) // a leased record, in no index
			if err := s.Complete(ctx, cl[2].Lease, nil); err != nil {
				t.Fatal(err)
			}
			do(t, c, "PERSIST", k.Job(cl[2].Job.ID)) // finished, kept forever
			if err := s.Complete(ctx, cl[3].Lease, nil); err != nil {
				t.Fatal(err)
			}
			do(t, c, "PERSIST", k.Job(cl[3].Job.ID)) // listed, due two minutes ago
			do(t, c, "RPUSH", k.Expire(), fmt.Sprintf("%d|%s", time.Now().Add(-2*time.Minute).UnixMilli(), cl[3].Job.ID))
			if tc.bucket {
				do(t, c, "ZADD", k.BucketIndex(), "1", k.Bucket(12345)) // an index member with no bucket
				want[jobstore.LeakEmptyBucket] = 1
			}
			if tc.stream {
				// cl[1]'s entry is still pending although its job now sits in
				// no index; a pending entry of no record, and one read and
				// acknowledged but never deleted.
				do(t, c, "XADD", k.Stream(), "*", "id", "pel-ghost")
				do(t, c, "XREADGROUP", "GROUP", "workers", "planter", "COUNT", "1", "STREAMS", k.Stream(), ">")
				// More entries read and done with than one listpack node holds.
				for i := range 150 {
					do(t, c, "XADD", k.Stream(), "*", "id", fmt.Sprint("done-ghost", i))
				}
				do(t, c, "XREADGROUP", "GROUP", "workers", "planter", "NOACK", "COUNT", "150", "STREAMS", k.Stream(), ">")
				want[jobstore.LeakPELFinished] = 1
				want[jobstore.LeakStreamUnread] = 150 + 4
			}
			got := census(t, s)
			for kind, n := range want {
				if got.Leaks[kind] != n {
					t.Errorf("leak %s: %d, want %d (census leaks %v, examples %v)", kind, got.Leaks[kind], n, got.Leaks, got.Examples)
				}
			}
			if got.LeakCount() != clean.LeakCount()+sum(want) {
				t.Errorf("leaks %v, want exactly %v", got.Leaks, want)
			}
		})
	}
}

func run(t *testing.T, s jobstore.Store, n int) []jobstore.Claimed {
	t.Helper()
	ctx := context.Background()
	var jobs []jobstore.NewJob
	for i := range n {
		jobs = append(jobs, jobstore.NewJob{ID: fmt.Sprintf("j%d", i)})
	}
	if err := s.Enqueue(ctx, jobs...); err != nil {
		t.Fatal(err)
	}
	cl, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "w", Max: n, Lease: time.Minute})
	if err != nil || len(cl) != n {
		t.Fatalf("claim: %d jobs, %v", len(cl), err)
	}
	return cl
}

func census(t *testing.T, s jobstore.Censuser) jobstore.Census {
	t.Helper()
	c, err := s.Census(context.Background())
	if err != nil {
		t.Fatalf("census: %v", err)
	}
	return c
}

func do(t *testing.T, c rclient.Client, args ...string) any {
	t.Helper()
	v, err := c.Do(context.Background(), rclient.Command{Head: args})
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}
