//go:build !linux

package health

import (
	"time"
)

func CPU() (time.Duration, bool) { return 0, false }

func RunQueueWait() (time.Duration, bool) { return 0, false }

func Steal() (time.Duration, int, bool) { return 0, 0, false }
