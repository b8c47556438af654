//go:build !linux

package health

import (
	"time"
)

func CPU() (time.Duration, bool) { return 0, false }

func RunQueueWait() (time.Duration, bool) { return 0, false }
