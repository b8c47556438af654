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

// inTurns: the overhead check can pause a side (SIGSTOP to its group).
const inTurns = true

// stopGroup and contGroup pause and resume a driver process with its
// children (the overhead check's turns).
func stopGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGSTOP) }
func contGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGCONT) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
