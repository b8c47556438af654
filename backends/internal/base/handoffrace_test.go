package base_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
	"github.com/aebench/aebench/redisserver/redistest"
)

// The deadline race's rounds: in each, raceClaimers claimers block
// together until their context's deadline (raceDeadline; base blocks
// until 50ms before it), and one Enqueue of as many jobs lands at that
// deadline. At hz 10 (Redis's default) an idle server times a block out
// on its next tick, up to 100ms late, so in about half the rounds every
// BZPOPMIN is still blocked in Redis when the clients' reads give up;
// the Enqueue then hands jobs to the registrations whose leave has not
// landed yet, and those blocks pop the items into replies nobody reads.
// At hz 10: 4 stores x 2 clients x 64 rounds x 40 claimers = 20,480 job
// trials; at hz 100, where a block outlives the read far less often, a
// quarter of that. Before the idempotent hand-off (issue 42) the hz 10
// trials stranded jobs in every store on both clients; the issue measured
// 7 in 17,280 trials of a steadier load.
const (
	raceClaimers = 40
	raceDeadline = 70 * time.Millisecond
)

// raceRounds is the rounds a store and client run at each hz.
var raceRounds = map[int]int{10: 64, 100: 16}

// TestHandoffDeadlineRace: every job the store leased must have been
// returned by some claim; every other job must still be due. Every store
// that hands off, on both clients, each on a server of its own at hz 10
// and at hz 100 (traffic of another would wake the server's loop and time
// the blocks out in time).
func TestHandoffDeadlineRace(t *testing.T) {
	if testing.Short() {
		t.Skip("the deadline race runs about 25,000 claims")
	}
	for _, hz := range []int{10, 100} {
		for _, cl := range []string{rclient.GoRedis, rclient.Rueidis} {
			for _, tc := range handoffStores {
				t.Run(fmt.Sprintf("hz%d/%s/%s", hz, cl, tc.name), func(t *testing.T) {
					t.Parallel()
					raceOne(t, hz, cl, tc.new)
				})
			}
		}
	}
}

// raceOne runs the rounds for one store and client on a server of its own
// at hz.
func raceOne(t *testing.T, hz int, cl string, newStore func(context.Context, rclient.Client, jobstore.Options) (jobstore.Store, error)) {
	r := redistest.Start(t, redisserver.Options{ExtraArgs: []string{"--hz", strconv.Itoa(hz)}})
	o := r.ClientOptions()
	o.PoolSize = 2*raceClaimers + 8
	c, err := rclient.New(cl, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s := openStore(t, c, newStore, jobstore.Options{Queue: "race", PollInterval: time.Millisecond})
	deadlineRace(t, s, raceRounds[hz])
}

// deadlineRace runs rounds on s and checks that no job was stranded.
func deadlineRace(t *testing.T, s jobstore.Store, rounds int) {
	ctx := context.Background()
	var mu sync.Mutex
	claimed := map[string]bool{}
	enqueued := 0
	for round := range rounds {
		at := time.Now().Add(raceDeadline)
		var wg sync.WaitGroup
		for i := range raceClaimers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cctx, cancel := context.WithDeadline(ctx, at)
				defer cancel()
				got, err := s.Claim(cctx, jobstore.ClaimRequest{WorkerID: "w" + strconv.Itoa(i), Max: 1, Lease: time.Minute, Wait: time.Second})
				if err != nil {
					t.Errorf("round %d, claimer %d: %v", round, i, err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, g := range got {
					if claimed[g.Job.ID] {
						t.Errorf("job %s returned by two claims", g.Job.ID)
					}
					claimed[g.Job.ID] = true
				}
			}()
		}
		time.Sleep(time.Until(at))
		jobs := make([]jobstore.NewJob, raceClaimers)
		for i := range jobs {
			jobs[i] = jobstore.NewJob{ID: fmt.Sprintf("j%d", enqueued+i)}
		}
		if err := s.Enqueue(ctx, jobs...); err != nil {
			t.Fatal(err)
		}
		enqueued += len(jobs)
		wg.Wait()
		// Take what no waiter was handed, so that every claimer of the
		// next round blocks.
		for {
			got, err := s.Claim(ctx, jobstore.ClaimRequest{WorkerID: "sweeper", Max: raceClaimers, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
			for _, g := range got {
				claimed[g.Job.ID] = true
			}
		}
	}
	var stranded []string
	for n := range enqueued {
		id := fmt.Sprintf("j%d", n)
		if claimed[id] {
			continue
		}
		j, err := s.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get %s: %v", id, err)
		}
		if j.Status != jobstore.StatusQueued && j.Status != jobstore.StatusScheduled {
			stranded = append(stranded, fmt.Sprintf("%s (%s, worker %s)", id, j.Status, j.WorkerID))
		}
	}
	t.Logf("%d claims ended by their deadline or a hand-off, %d jobs enqueued, %d returned by a claim",
		rounds*raceClaimers, enqueued, len(claimed))
	if len(stranded) > 0 {
		t.Errorf("%d job(s) leased by the hand-off but returned by no claim: %v", len(stranded), stranded)
	}
}
