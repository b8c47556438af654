//go:build !linux

package engine

import (
	"syscall"
	"time"
)

func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func processCPU() (time.Duration, bool) { return 0, false }

func runQueueWait() (time.Duration, bool) { return 0, false }
