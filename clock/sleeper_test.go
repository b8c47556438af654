package clock_test

import (
	"testing"
	"time"

	"github.com/aebench/aebench/clock"
)

func TestSleeperWaitsAtLeast(t *testing.T) {
	s := clock.NewSleeper(nil)
	defer s.Close()
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		if !s.For(d) {
			t.Fatalf("For(%v) = false with no stop", d)
		}
		if got := time.Since(start); got < d {
			t.Errorf("For(%v) returned after %v", d, got)
		}
	}
}

func TestSleeperStop(t *testing.T) {
	stop := make(chan struct{})
	s := clock.NewSleeper(stop)
	defer s.Close()
	go func() { time.Sleep(20 * time.Millisecond); close(stop) }()
	if s.For(time.Hour) {
		t.Fatal("For(1h) = true after stop closed")
	}
	if s.Until(time.Now().Add(time.Millisecond)) {
		t.Fatal("a wait after stop returned true")
	}
}
