package clock

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fdSleeper waits on a timerfd through the runtime's poller (see Sleeper).
type fdSleeper struct {
	f      *os.File
	fd     int
	buf    [8]byte
	closed chan struct{}
}

func newSleeperImpl(stop <-chan struct{}) sleeperImpl {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		// Out of file descriptors or a kernel without timerfd: still correct,
		// only coarser.
		return newTimerSleeper()
	}
	s := &fdSleeper{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd, closed: make(chan struct{})}
	if stop != nil {
		// One watcher for the Sleeper's life: a stop sets a past read
		// deadline, which ends the wait under way and every later one.
		go func() {
			select {
			case <-stop:
				_ = s.f.SetReadDeadline(time.Unix(1, 0))
			case <-s.closed:
			}
		}()
	}
	return s
}

func (s *fdSleeper) wait(d time.Duration, _ <-chan struct{}) bool {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return true
	}
	_, err := s.f.Read(s.buf[:])
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

func (s *fdSleeper) close() error {
	close(s.closed)
	return s.f.Close()
}
