//go:build linux

package redisserver

import "syscall"

// sysProcAttr makes a spawned server die with its parent (Pdeathsig; note it
// fires when the forking OS thread exits, which the Go runtime only does for
// goroutines that exit while locked to their thread) and puts it in its own
// process group, so a terminal's Ctrl-C reaches only the parent, which can
// then still read the server before Close.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// processAlive reports whether a process with this pid runs (signal 0).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
