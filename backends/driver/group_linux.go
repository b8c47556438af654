//go:build linux

package driver

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a driver process in a process group of its own, so that
// killing it takes its children too (RQ forks its workers and scheduler).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
