// Package clock holds the time source a job store makes every time decision
// with: the wall clock for real runs, and a manual clock that tests and
// simulations move by hand. Stores pass its readings to Redis scripts in
// milliseconds, so Redis's own TIME never decides anything.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Manual is a clock that moves only when told to. The zero value is not
// usable; make one with NewManual.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a manual clock set to start, truncated to the millisecond
// because stores keep times in milliseconds.
func NewManual(start time.Time) *Manual {
	return &Manual{now: start.Truncate(time.Millisecond)}
}

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.now = m.now.Add(d)
	m.mu.Unlock()
}

// Set moves the clock to t.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	m.now = t
	m.mu.Unlock()
}

// Millis is t as Unix milliseconds, the unit every store script uses.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis is the inverse of Millis; 0 maps to the zero time.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
