package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/trace"
	"github.com/aebench/aebench/scenarios"
)

// applyTrace loads producers.trace into a cell's conditions: the file
// from the scenario's directory (from the working directory when given
// with --set; a shipped scenario's from the binary), parsed once per
// path. The trace spans the window unless duration is given, and replaces
// producers.rate and phases; the conditions record what was replayed.
func (p *parser) applyTrace(cfg *Config) error {
	pc := &cfg.Producers
	if pc.Trace == "" {
		return nil
	}
	at := func(field, msg string) error { return p.errAt(p.nodes[field], field, msg) }
	switch {
	case len(cfg.Phases) > 0:
		return at("producers.trace", "replays arrivals, and phases shape a rate: give one of them")
	case pc.Mode != "open":
		return at("producers.trace", fmt.Sprintf("replays an open loop's arrivals; producers.mode is %s", pc.Mode))
	case pc.Batch != 1:
		return at("producers.batch", fmt.Sprintf("%d: a trace sends each arrival at its own time; allowed with producers.trace: 1", pc.Batch))
	case p.nodes["producers.rate"] != nil:
		return at("producers.rate", "is the trace's when producers.trace is given: remove one")
	}
	tr, err := p.loadTrace(pc.Trace, pc.Payload)
	if err != nil {
		return err
	}
	pc.TraceData = tr
	scale := pc.TraceScale
	if scale <= 0 {
		scale = 1
	}
	span := tr.Span()
	if p.nodes["duration"] == nil {
		if cfg.Warmup >= span {
			return at("warmup", fmt.Sprintf("%s: the trace spans %s and plays from the run's start, warm-up included: a warm-up shorter than the trace", cfg.Warmup, span))
		}
		cfg.Duration = span - cfg.Warmup
	} else if cfg.Warmup+cfg.Duration > span && !pc.TraceLoop {
		return at("duration", fmt.Sprintf("warmup %s + duration %s runs past the trace's %s, which would send nothing after it: set producers.trace_loop: true, or a shorter duration", cfg.Warmup, cfg.Duration, span))
	}
	// The offered rate is the measured window's: the arrivals the trace
	// puts in it (the warm-up's and any after it left out).
	pc.Rate = windowRate(tr, cfg.Warmup, cfg.Duration, pc.TraceLoop) * scale
	// What the trace holds stands in for the producers' own settings, so
	// applicability (a store without delayed jobs), the drain's estimate
	// and the conditions line follow the trace.
	var delayed, bytes int
	var longest time.Duration
	for _, a := range tr.Arrivals {
		bytes += a.Payload
		if a.Delay > 0 {
			delayed++
			longest = max(longest, a.Delay)
		}
	}
	pc.Payload = bytes / len(tr.Arrivals)
	pc.Delayed = math.Round(float64(delayed)/float64(len(tr.Arrivals))*1000) / 1000
	if delayed > 0 {
		pc.Delay, _ = conditions.ParseDist(fmt.Sprintf("uniform(0s, %s)", longest))
		pc.DelayText = "from the trace (up to " + longest.String() + ")"
	}
	loop := ""
	if pc.TraceLoop {
		loop = ", looped"
	}
	pc.TraceText = fmt.Sprintf("trace %s (%d arrivals over %s, mean %.0f jobs/s x %g%s, sha256 %.12s)", pc.Trace, len(tr.Arrivals), span,
		float64(len(tr.Arrivals))/span.Seconds(), scale, loop, tr.SHA256)
	return nil
}

// loadTrace reads and parses the trace at name, once per plan.
func (p *parser) loadTrace(name string, payload int) (*trace.Trace, error) {
	if tr, ok := p.traces[name]; ok {
		return tr, nil
	}
	path := name
	if _, fromCLI := p.origin[p.nodes["producers.trace"]]; !fromCLI && !filepath.IsAbs(name) {
		path = filepath.Join(filepath.Dir(p.file), name)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if shipped, ok := scenarios.ReadData(path); ok {
			data, err = shipped, nil
		}
	}
	if err != nil {
		return nil, p.errAt(p.nodes["producers.trace"], "producers.trace", fmt.Sprintf("cannot read the trace: %v", err))
	}
	tr, err := trace.Parse(path, data, payload)
	var te *trace.Error
	if errors.As(err, &te) {
		return nil, &ConfigError{File: te.File, Line: te.Line, Field: "producers.trace" + fieldSuffix(te.Field), Msg: te.Msg}
	}
	if err != nil {
		return nil, err
	}
	if p.traces == nil {
		p.traces = map[string]*trace.Trace{}
	}
	p.traces[name] = tr
	return tr, nil
}

func fieldSuffix(col string) string {
	if col == "" {
		return ""
	}
	return " column " + col
}

// windowRate is the trace's arrivals per second from warmup for duration,
// looped past its span when loop.
func windowRate(tr *trace.Trace, warmup, duration time.Duration, loop bool) float64 {
	span, n := tr.Span(), 0
	for base := time.Duration(0); base < warmup+duration; base += span {
		for _, a := range tr.Arrivals {
			if at := base + a.Offset; at >= warmup && at < warmup+duration {
				n++
			}
		}
		if !loop {
			break
		}
	}
	return float64(n) / duration.Seconds()
}
