//go:build !linux

package redisserver

import "syscall"

// sysProcAttr: without Pdeathsig, the server stays in the parent's process
// group so at least a terminal's Ctrl-C stops it too.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// processAlive: without a portable check every directory's owner is taken
// to run, so nothing is reaped.
func processAlive(int) bool { return true }
