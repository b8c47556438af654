//go:build !linux

package engine

import (
	"os"
	"syscall"
	"time"
)

func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func processCPU() (time.Duration, bool) { return 0, false }

func runQueueWait() (time.Duration, bool) { return 0, false }

func killGroup(p *os.Process) error { return p.Kill() }
