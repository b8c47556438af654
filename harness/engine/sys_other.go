//go:build !linux

package engine

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
