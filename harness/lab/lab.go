// Package lab holds aebench's lab procedures: the commands that run a
// fixed plan of scenarios or programs and judge a published statement with
// it, rather than run one scenario. claims runs the seeds' flaws and the
// design documents' claims and writes their verdict table; peer-check runs
// aebench's asynq and floor beside plain programs on one Redis; drivers
// measures what the job-system drivers add. Package cli wires them as
// commands; each takes its arguments and returns an exit code.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/verdict"
)

// Options is what a procedure needs of the command line: the backends the
// binary offers and where to write.
type Options struct {
	Registry       *registry.Registry
	Stdout, Stderr io.Writer
}

// Exit codes, the command line's (verdict's).
const (
	exitOK     = verdict.ExitOK
	exitFailed = verdict.ExitCorrectness
	exitUsage  = verdict.ExitUsage
	exitInfra  = verdict.ExitInfra
	exitThresh = verdict.ExitThreshold
)

// PrintDriver prints a driver's hello: what it declares, or how to install it.
func PrintDriver(w io.Writer, spec driver.Spec) {
	h, err := driver.ProbeHello(context.Background(), spec)
	if err != nil {
		if errors.Is(err, driver.ErrNotInstalled) {
			fmt.Fprintf(w, "  %-8s driver: not installed: %v\n", "", err)
		} else {
			fmt.Fprintf(w, "  %-8s driver: broken: %v\n", "", err)
		}
		return
	}
	loses := "none"
	if len(h.Loses) > 0 {
		loses = strings.Join(h.Loses, ", ")
	}
	fmt.Fprintf(w, "  %-8s driver: %s %s on %s (driver %s, protocol %d)\n", "", h.System, h.SystemVersion, h.Runtime, h.DriverVersion, h.Protocol)
	fmt.Fprintf(w, "  %-8s declares: delayed %v, retries %q, recovery %q, batch enqueue %v; loses in-flight jobs under: %s\n",
		"", h.Caps.Delayed, h.Caps.Retries, h.Caps.Recovery, h.Caps.BatchEnqueue, loses)
	fmt.Fprintf(w, "  %-8s guarantees: %s\n", "", h.Guarantees)
}
