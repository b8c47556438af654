//go:build linux

package engine

import "syscall"

// workerProcAttr makes a worker process die with its coordinator
// (Pdeathsig), so a coordinator that dies never leaks workers, and puts it
// in its own process group so a terminal's Ctrl-C reaches only the
// coordinator, which then stops its workers itself.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
