//go:build unix

package redisserver

import (
	"os"
	"syscall"
)

func sigStop(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }
func sigCont(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
func sigTerm(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
