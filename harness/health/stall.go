package health

import (
	"fmt"
	"sync/atomic"
	"time"
)

// stallTick is the stall meter's period: a goroutine that sleeps this long
// and records how much later than asked it woke (as jHiccup does). What
// delays it (a wait for a CPU, a GC pause) delays the workers' heartbeats
// and calls alike.
const stallTick = time.Millisecond

// StallMeter records the longest oversleep of a stallTick sleep loop
// while it runs. It runs on simulated time only, where a lease's real
// length can be shorter than such a stall.
type StallMeter struct {
	max  atomic.Int64
	done chan struct{}
}

// StartStallMeter starts a meter; Stop ends it.
func StartStallMeter() *StallMeter {
	m := &StallMeter{done: make(chan struct{})}
	go func() {
		t := time.NewTimer(stallTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-m.done:
				return
			case now := <-t.C:
				if over := now.Sub(last) - stallTick; over > time.Duration(m.max.Load()) {
					m.max.Store(int64(over))
				}
				last = time.Now()
				t.Reset(stallTick)
			}
		}
	}()
	return m
}

// Stop ends the meter and returns the longest stall it saw (0 for a nil
// meter).
func (m *StallMeter) Stop() time.Duration {
	if m == nil {
		return 0
	}
	close(m.done)
	return time.Duration(m.max.Load())
}

// StallNote flags a simulated run whose own stall reached its lease's
// real length while jobs were run again: those reruns (or recoveries) may
// be the machine's, not the design's.
func StallNote(stall, realLease time.Duration, reruns, recovered int64, speed float64) string {
	if stall <= 0 || stall < realLease || reruns+recovered == 0 {
		return ""
	}
	return fmt.Sprintf("stall: the harness stalled up to %s real (CPU run-queue wait or GC) where a lease lasts %s real (x%g): "+
		"some of the %d reruns and %d recoveries may come from the stall, not the design; lower time.speed",
		stall.Round(10*time.Microsecond), realLease, speed, reruns, recovered)
}
