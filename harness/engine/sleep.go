package engine

import "time"

// fineSleep is the tail of a wait that is slept with nanosleep instead of a
// Go timer. Go's timers on this kind of machine wake up to a millisecond
// late (the runtime's poller sleeps in whole milliseconds); nanosleep wakes
// within about 100µs. Without this, an open-loop producer starts every call
// half a millisecond late on average and a 0.7ms handler runs 1.1ms, and
// both would show up in end-to-end latency as if the store had caused them.
const fineSleep = 2 * time.Millisecond

// preciseSleep waits d: a Go timer for all but the last fineSleep (so stop
// can end a long wait), then nanosleep, which blocks one OS thread for at
// most fineSleep. It returns false when stop closed first.
func preciseSleep(d time.Duration, stop <-chan struct{}, timer *time.Timer) bool {
	end := time.Now().Add(d)
	if d > fineSleep {
		timer.Reset(d - fineSleep)
		select {
		case <-stop:
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
	if left := time.Until(end); left > 0 {
		nanosleep(left)
	}
	return true
}
