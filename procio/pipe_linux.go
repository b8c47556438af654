//go:build linux

package procio

import (
	"os"
	"syscall"
)

// Pipe is a pipe for a child's event lines whose read end blocks its
// thread instead of joining Go's network poller: the poller wakes on every
// write the child makes, so a PacedReader's pause would save nothing. With
// a blocking read end, the writes gather while the reader sleeps.
func Pipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
