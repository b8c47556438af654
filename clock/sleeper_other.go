//go:build !linux

package clock

func newSleeperImpl(<-chan struct{}) sleeperImpl { return newTimerSleeper() }
