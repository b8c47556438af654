package readback_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/ledger"
	"github.com/aebench/aebench/harness/readback"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/redisserver/redistest"
)

// brokenLocate is a real store whose Locate answers for the first n ids
// of a call and then fails, as a driver that times out half-way does.
type brokenLocate struct {
	jobstore.Store
	n int
}

func (b brokenLocate) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	locs, err := b.Store.(jobstore.Locator).Locate(ctx, ids[:min(b.n, len(ids))])
	if err != nil {
		return nil, err
	}
	return locs, errors.New("inspect: context deadline exceeded")
}

// TestUnreadableIsNotLost: jobs whose state a read-back could not read are
// counted unreadable, never lost, and the run fails on the read-back; the
// jobs read are placed as ever (queued: cut off by the drain).
func TestUnreadableIsNotLost(t *testing.T) {
	ctx := context.Background()
	c, _ := redistest.Client(t)
	be, _ := registry.Lookup("zset")
	st, err := be.Build(ctx, c, jobstore.Options{Queue: "rb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	led := ledger.New()
	ids := []string{"a", "b", "c", "d"}
	var planned []ledger.PlannedJob
	for _, id := range ids {
		if err := st.Enqueue(ctx, jobstore.NewJob{ID: id}); err != nil {
			t.Fatal(err)
		}
		planned = append(planned, ledger.PlannedJob{ID: id, Intended: time.Now()})
	}
	led.Planned(planned, time.Now())
	led.Acked(ids)
	var noted []error
	rd := &readback.Reader{Store: brokenLocate{Store: st, n: 1}, Ledger: led, NoteErr: func(err error) { noted = append(noted, err) },
		Completed: func() {}, Dead: func() {}, AckLost: func() {}}
	rd.Outstanding()
	rep := led.Check()
	if rep.Lost != 0 || rep.Unreadable != 3 || rep.UnfinishedAtDrain != 1 {
		t.Fatalf("lost %d, unreadable %d, unfinished %d; want 0, 3, 1", rep.Lost, rep.Unreadable, rep.UnfinishedAtDrain)
	}
	if rep.OK || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "the read-back failed") {
		t.Errorf("problems %v: want the read-back's failure", rep.Problems)
	}
	if len(noted) == 0 || !strings.Contains(noted[0].Error(), "inspect: context deadline exceeded") {
		t.Errorf("noted %v: want the Locate error named", noted)
	}
}
