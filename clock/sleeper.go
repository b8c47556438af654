package clock

import (
	"time"
)

// Sleeper waits until an instant with sub-millisecond precision, for the
// harness's producers and handlers, whose lateness would otherwise be
// measured as if the store had caused it.
//
// Why not time.Sleep: Go's timers on Linux wake through the runtime's
// poller, which sleeps in whole milliseconds, so a 100µs wait takes about
// 1ms. Why not nanosleep: it is a blocking system call that keeps its P
// (one of GOMAXPROCS) until the runtime's monitor takes it back, which can
// take up to 10ms when the monitor has backed off; on a 2-core machine two
// sleeping producers then stall every other goroutine, and the harness's
// own tail (null store e2e p99) was 4-5ms at 1000 jobs/s. On Linux a
// Sleeper arms a timerfd registered with the runtime's poller: the
// goroutine parks like on any socket, holds no P, and the poller wakes it
// when the fd fires, within tens of microseconds on an idle core.
//
// A Sleeper is for one goroutine at a time. Close releases it.
type Sleeper struct {
	impl sleeperImpl
	stop <-chan struct{}
}

type sleeperImpl interface {
	// wait blocks for d; false when stop closed first.
	wait(d time.Duration, stop <-chan struct{}) bool
	close() error
}

// NewSleeper returns a Sleeper whose waits end early, returning false,
// once stop is closed (a nil stop never closes).
func NewSleeper(stop <-chan struct{}) *Sleeper {
	return &Sleeper{impl: newSleeperImpl(stop), stop: stop}
}

// Until waits until t on the wall clock; false when stop closed first.
func (s *Sleeper) Until(t time.Time) bool {
	return s.For(time.Until(t))
}

// For waits d; false when stop closed first. A d <= 0 returns at once.
func (s *Sleeper) For(d time.Duration) bool {
	select {
	case <-s.stop:
		return false
	default:
	}
	if d <= 0 {
		return true
	}
	return s.impl.wait(d, s.stop)
}

// Close releases the Sleeper's timer.
func (s *Sleeper) Close() error { return s.impl.close() }

// timerSleeper is the portable fallback: a Go timer, millisecond-grained.
type timerSleeper struct{ t *time.Timer }

func newTimerSleeper() *timerSleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerSleeper{t: t}
}

func (ts *timerSleeper) wait(d time.Duration, stop <-chan struct{}) bool {
	ts.t.Reset(d)
	select {
	case <-stop:
		ts.t.Stop()
		return false
	case <-ts.t.C:
		return true
	}
}

func (ts *timerSleeper) close() error { ts.t.Stop(); return nil }
