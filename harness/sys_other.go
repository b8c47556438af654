//go:build !linux

package harness

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
