package rclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/aebench/aebench/rclient"
)

// lateTimer is a context past its deadline whose own timer has not fired
// yet (Err still nil): what a loaded machine shows for a moment after a
// socket deadline taken from the context has ended a blocking read.
type lateTimer struct {
	context.Context
	dl time.Time
}

func (c lateTimer) Deadline() (time.Time, bool) { return c.dl, true }

func TestEnded(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	live, stop := context.WithTimeout(context.Background(), time.Hour)
	defer stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"no deadline", context.Background(), false},
		{"deadline ahead", live, false},
		{"canceled", canceled, true},
		{"deadline passed, timer not yet fired", lateTimer{context.Background(), time.Now().Add(-time.Millisecond)}, true},
	} {
		if got := rclient.Ended(tc.ctx); got != tc.want {
			t.Errorf("%s: Ended = %v, want %v", tc.name, got, tc.want)
		}
	}
}
