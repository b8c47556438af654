//go:build !linux

package procio

import "os"

// Pipe is os.Pipe where a blocking pipe is not made here.
func Pipe() (r, w *os.File, err error) { return os.Pipe() }
