package clock

import (
	"time"
)

// Scaled is simulated time that runs Speed times as fast as the wall clock
// (speed 60: one real second is one simulated minute), so that scenarios on
// the seeds' scales (30-minute timeouts, 5-minute buckets, hours of
// schedules) replay in minutes. It starts at the simulated instant Origin
// when the wall clock reads RealOrigin. Stores read it like any clock; the
// harness converts every wait it sleeps with Real, and blocking waits in
// Redis are bounded with RealDuration so none outlasts its simulated
// meaning.
type Scaled struct {
	origin, realOrigin time.Time
	speed              float64
}

// NewScaled returns a clock at origin now, running speed times as fast as
// the wall clock. A speed <= 0 is taken as 1.
func NewScaled(origin time.Time, speed float64) *Scaled {
	if speed <= 0 {
		speed = 1
	}
	return &Scaled{origin: origin, realOrigin: time.Now(), speed: speed}
}

// Now returns the simulated time.
func (s *Scaled) Now() time.Time {
	return s.origin.Add(time.Duration(float64(time.Since(s.realOrigin)) * s.speed))
}

// Speed is how many simulated seconds pass per real second.
func (s *Scaled) Speed() float64 { return s.speed }

// Real is the wall-clock instant at which the simulated instant t comes.
func (s *Scaled) Real(t time.Time) time.Time {
	return s.realOrigin.Add(time.Duration(float64(t.Sub(s.origin)) / s.speed))
}

// Sim is the simulated instant at wall-clock instant t.
func (s *Scaled) Sim(t time.Time) time.Time {
	return s.origin.Add(time.Duration(float64(t.Sub(s.realOrigin)) * s.speed))
}

// Speeder is a clock that does not run at the wall clock's pace.
type Speeder interface {
	Speed() float64
}

// SimDuration is how much time passes on clock c while d passes on the
// wall clock: d itself unless c runs at another speed (RealDuration's
// inverse).
func SimDuration(c Clock, d time.Duration) time.Duration {
	if sp, ok := c.(Speeder); ok && sp.Speed() != 1 {
		return time.Duration(float64(d) * sp.Speed())
	}
	return d
}

// RealDuration is how long a wait of d on clock c lasts on the wall clock:
// d itself unless c runs at another speed.
func RealDuration(c Clock, d time.Duration) time.Duration {
	if sp, ok := c.(Speeder); ok && sp.Speed() != 1 {
		return time.Duration(float64(d) / sp.Speed())
	}
	return d
}
