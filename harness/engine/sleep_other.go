//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package engine

import "time"

func nanosleep(d time.Duration) { time.Sleep(d) }
