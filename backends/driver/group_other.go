//go:build !linux

package driver

import "os/exec"

func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// Elsewhere the overhead check's turns are not taken: both sides would
// run at once, so Overhead refuses (inTurns).
const inTurns = false

func stopGroup(*exec.Cmd) {}
func contGroup(*exec.Cmd) {}
