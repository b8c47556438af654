//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package harness

import "time"

func nanosleep(d time.Duration) { time.Sleep(d) }
