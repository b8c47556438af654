package procio

import (
	"io"
	"time"
)

// PacedReader reads a stream of small writes (a worker's event lines) in
// batches: after a read that did not fill half the buffer it waits Pace
// before reading again, so the writer's lines gather in the pipe and one
// wake-up reads many. A worker that writes two lines per job at thousands
// of jobs a second otherwise wakes its reader for each, on the CPUs the
// measured system needs. Events carry their own timestamps, so the pace
// delays their bookkeeping, never what they measure.
type PacedReader struct {
	R    io.Reader
	Pace time.Duration
	last int
	full bool // a read has happened (the first is not paused)
}

func (p *PacedReader) Read(b []byte) (int, error) {
	if p.full && p.last < len(b)/2 {
		time.Sleep(p.Pace)
	}
	n, err := p.R.Read(b)
	p.last, p.full = n, true
	return n, err
}
