//go:build !linux

package engine

import (
	"time"
)

func processCPU() (time.Duration, bool) { return 0, false }

func runQueueWait() (time.Duration, bool) { return 0, false }
