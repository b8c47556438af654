package scenario

import (
	"fmt"
	"time"

	"github.com/aebench/aebench/backends/null"
	"github.com/aebench/aebench/backends/registry"
)

// Cell is one point of the matrix: the conditions every backend of the
// scenario runs under, so one table compares backends under identical load.
type Cell struct {
	Index int
	// Vary lists the matrix fields and their values at this point
	// ("producers.rate=1000"); empty when the scenario has no list field.
	Vary     []string
	Base     Config
	Backends []BackendSpec
}

// Scenario is a parsed scenario file.
type Scenario struct {
	Name        string
	Description string
	File        string
	Source      []byte // the file as read, for summary.json
	Overrides   []string
	Repeats     int
	// Calibration is the measured duration of the null-backend calibration
	// run in each cell; 0 turns it off.
	Calibration time.Duration
	Cells       []Cell
	// Thresholds are the file's gates as written; package verdict parses
	// and checks them (this package does not know the metrics).
	Thresholds []Threshold
	// Warnings are doubts about the file that are not errors (a drain
	// shorter than an unbounded handler distribution's 99.9th percentile).
	Warnings []string
	// reg is the backend registry the file was checked against.
	reg *registry.Registry
}

// registry is the scenario's backend registry (the built-in one for a
// Scenario not made by Parse).
func (s *Scenario) registry() *registry.Registry {
	if s.reg == nil {
		s.reg = registry.Builtin()
	}
	return s.reg
}

// Runs lists every run in order, round by round: round r runs repeat r of
// every cell, and in each cell every backend once, so that the runs a
// paired ratio compares (backends of one cell, or one backend across cells,
// as a claim's differential does) are taken side by side and slow drift of
// the machine favours none. Within a cell the backends' order rotates by
// one each round (round 1 as written, round 2 from the second backend, and
// so on), so no backend always runs first or after the same neighbour: on
// a shared host a place may move a p99 by more than the margins judged
// (latency.yaml's bucket 1.34x the floor in the written order, 0.79x with
// it reversed, one run each; docs/results.md). Each cell's calibration run
// comes first in the first round.
func (s *Scenario) Runs() []RunSpec {
	var out []RunSpec
	for r := 1; r <= s.Repeats; r++ {
		for _, c := range s.Cells {
			out = append(out, s.cellRound(c, r)...)
		}
	}
	return out
}

// cellRound is cell c's runs of round r.
func (s *Scenario) cellRound(c Cell, r int) []RunSpec {
	var out []RunSpec
	// The cell prefix names files apart only where there are cells to
	// tell apart: "zset.e2e.hgrm" in a one-cell scenario.
	cell := ""
	if len(s.Cells) > 1 {
		cell = fmt.Sprintf("c%d-", c.Index)
	}
	if s.Calibration > 0 && r == 1 {
		cfg := c.Base
		cfg.Duration = s.Calibration
		cfg.Backend = BackendSpec{Name: null.Name, Label: null.Name}
		// The calibration measures the harness: no faults, no processes.
		cfg.Faults, cfg.Workers.Processes = nil, 0
		out = append(out, RunSpec{ID: cell + "calibration", Cell: c.Index, Repeat: 1,
			Calibration: true, Config: cfg})
	}
	n := len(c.Backends)
	for i := range c.Backends {
		b := c.Backends[(i+r-1)%n]
		cfg := c.Base
		cfg.Backend = b
		id := cell + b.Label
		if s.Repeats > 1 {
			id = fmt.Sprintf("%sr%d-%s", cell, r, b.Label)
		}
		out = append(out, RunSpec{ID: id, Cell: c.Index, Repeat: r, Config: cfg})
	}
	return out
}
