//go:build linux

package workerproc

import (
	"os"
	"syscall"
)

// procAttr makes a worker process die with its coordinator (Pdeathsig),
// so a coordinator that dies never leaks workers, and puts it in its own
// process group so a terminal's Ctrl-C reaches only the coordinator, which
// then stops its workers itself.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup SIGKILLs a worker process and every process it started: they
// share its process group (procAttr).
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		return p.Kill()
	}
	return nil
}
