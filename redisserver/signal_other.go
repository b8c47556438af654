//go:build !unix

package redisserver

import (
	"errors"
	"os"
)

func sigStop(*os.Process) error   { return errors.ErrUnsupported }
func sigCont(*os.Process) error   { return errors.ErrUnsupported }
func sigTerm(p *os.Process) error { return p.Kill() }
