// Package procio holds the input and output of the child processes a run
// starts (aebench's own worker processes and the job systems' drivers):
// their event lines read in batches, and their stderr kept for the errors
// that explain a failure.
package procio

import (
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Capture keeps the first Max bytes written to it (64 KiB when Max is 0)
// and drops the rest; it is safe for a process's stderr copier and the
// reader of its text at once.
type Capture struct {
	Max int
	mu  sync.Mutex
	b   strings.Builder
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.Max
	if limit == 0 {
		limit = 1 << 16
	}
	if c.b.Len() < limit {
		c.b.Write(p)
	}
	return len(p), nil
}

// String is what was kept.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// Start starts cmd with its stdout on a Pipe and returns the read end,
// which the caller closes once it has read to the end.
func Start(cmd *exec.Cmd) (*os.File, error) {
	r, w, err := Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close() // the child holds its own copy
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}
