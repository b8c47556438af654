//go:build linux || darwin || freebsd || netbsd || openbsd

package engine

import (
	"syscall"
	"time"
)

func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
