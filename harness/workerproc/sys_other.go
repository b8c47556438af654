//go:build !linux

package workerproc

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func killGroup(p *os.Process) error { return p.Kill() }
