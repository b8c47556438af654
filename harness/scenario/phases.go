package scenario

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/suggest"
)

// phaseFields are the fields of one entry of phases:.
func phaseFields() []string {
	return []string{"name", "duration", "rate", "ramp", "delayed", "delay", "handler", "fail", "payload"}
}

// phaseOverrides map a phase's workload fields to the scenario fields
// they override.
func phaseOverrides() map[string]string {
	return map[string]string{"delayed": "producers.delayed", "delay": "producers.delay", "handler": "workers.handler",
		"fail": "workers.fail", "payload": "producers.payload"}
}

// parsePhases reads the phases: list: each a mapping of a name, a
// duration, a rate (jobs/s) and, but for the first, an optional ramp from
// the previous phase's rate. Errors name the phase and the field.
func (p *parser) parsePhases(n *yaml.Node) ([]conditions.Phase, error) {
	const allowed = "a list of {name, duration, rate, ramp} with optional workload overrides {delayed, delay, handler, fail, payload}, e.g. [{name: steady, duration: 30s, rate: 500}, {name: burst, duration: 10s, rate: 5000, handler: 20ms}]"
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errAt(n, "phases", "must be a non-empty list; allowed: "+allowed)
	}
	var out []conditions.Phase
	p.phaseWork = nil
	names := map[string]bool{}
	for i, item := range n.Content {
		item = resolve(item)
		field := fmt.Sprintf("phases[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, p.errAt(item, field, "must be a mapping; allowed: "+allowed)
		}
		ph, err := p.phase(item, field, i)
		if err != nil {
			return nil, err
		}
		if names[ph.Name] {
			return nil, p.errAt(item, field+".name", fmt.Sprintf("%q names two phases: each phase needs its own name", ph.Name))
		}
		names[ph.Name] = true
		out = append(out, ph)
	}
	return out, nil
}

// phase reads the i-th phase.
func (p *parser) phase(item *yaml.Node, field string, i int) (conditions.Phase, error) {
	var ph conditions.Phase
	seen := map[string]bool{}
	var work [][2]string
	defer func() { p.phaseWork = append(p.phaseWork, work) }()
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], resolve(item.Content[j+1])
		at := field + "." + k.Value
		if v.Kind != yaml.ScalarNode {
			return ph, p.errAt(v, at, "expects a value")
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "name":
			ph.Name = strings.TrimSpace(v.Value)
			switch {
			case ph.Name == "warmup" && i > 0:
				err = fmt.Errorf("a warmup phase is the run's warm-up: only the first phase may be one")
			case ph.Name == "" || ph.Name == "drain" || ph.Name == "measure":
				err = fmt.Errorf("%q: a phase needs a name of its own (not drain or measure, which the harness's own stretches are called)", v.Value)
			}
		case "duration":
			ph.Duration, err = time.ParseDuration(v.Value)
			if err == nil && (ph.Duration <= 0 || ph.Duration > 24*time.Hour) {
				err = fmt.Errorf("%s: allowed: a duration > 0, at most 24h", v.Value)
			}
		case "rate":
			if x, ok := strings.CutSuffix(strings.TrimSpace(v.Value), "x"); ok {
				// A multiple of producers.capacity, resolved per cell.
				ph.Times, err = strconv.ParseFloat(x, 64)
				if err == nil && (ph.Times <= 0 || ph.Times > 1000) {
					err = fmt.Errorf("%s: allowed: a multiple of the capacity > 0 (1.5x)", v.Value)
				}
				break
			}
			ph.Rate, err = strconv.ParseFloat(v.Value, 64)
			if err == nil && (ph.Rate <= 0 || ph.Rate > 1e7) {
				err = fmt.Errorf("%s: allowed: jobs/s > 0, at most 1e7, or a multiple of producers.capacity (1.5x)", v.Value)
			}
		case "ramp":
			ph.Ramp, err = strconv.ParseBool(v.Value)
			if err == nil && ph.Ramp && i == 0 {
				err = fmt.Errorf("the first phase has no previous phase to ramp from: give it a rate, and ramp in the next")
			}
		case "delayed", "delay", "handler", "fail", "payload":
			// Checked now with the field's own rules; applied per cell.
			path := phaseOverrides()[k.Value]
			f, _ := fieldByPath(path)
			var scratch Config
			if err = f.set(&scratch, v.Value); err != nil {
				err = fmt.Errorf("%w; allowed: %s (as %s)", err, f.Allowed, path)
			}
			work = append(work, [2]string{path, v.Value})
		default:
			err = fmt.Errorf("unknown field %q%s; allowed: %s", k.Value, suggest.DidYouMean(k.Value, phaseFields()), strings.Join(phaseFields(), ", "))
			at = field
		}
		if err != nil {
			return ph, p.errAt(v, at, err.Error())
		}
	}
	for _, f := range []string{"name", "duration", "rate"} {
		if !seen[f] {
			return ph, p.errAt(item, field+"."+f, "is required")
		}
	}
	if ph.Name == "ramp" && !seen["ramp"] && i > 0 {
		ph.Ramp = true // the shorthand: a phase called ramp ramps
	}
	return ph, nil
}

// applyPhases puts the profile in a cell's conditions: the measured window
// is the phases' sum, and the fields the profile replaces must not be
// given beside it.
func (p *parser) applyPhases(cfg *Config) error {
	if len(p.phases) == 0 {
		if cfg.Producers.CapacityProbe > 0 {
			return p.errAt(p.nodes["producers.capacity"], "producers.capacity", "measure serves phases' relative rates (rate: 1.5x) and their fluid model: give phases, or a number")
		}
		return nil
	}
	if _, fromCLI := p.origin[p.pnode]; fromCLI {
		// Phases given with --set replace the file's single rate and
		// duration: said, not silent.
		for _, f := range []string{"duration", "producers.rate"} {
			if n := p.nodes[f]; n != nil {
				if _, cli := p.origin[n]; !cli {
					p.nodes[f] = nil
					if w := fmt.Sprintf("--set phases replaces the file's %s", f); !slices.Contains(p.warnings, w) {
						p.warnings = append(p.warnings, w)
					}
				}
			}
		}
	}
	switch {
	case p.nodes["duration"] != nil:
		return p.errAt(p.nodes["duration"], "duration", "is the phases' sum when phases are given: remove duration, or the phases")
	case p.nodes["producers.rate"] != nil:
		return p.errAt(p.nodes["producers.rate"], "producers.rate", "is each phase's rate when phases are given: remove producers.rate, or the phases")
	case cfg.Producers.Mode != "open":
		return p.errAt(p.pnode, "phases", fmt.Sprintf("shape an open loop's rate; producers.mode is %s", cfg.Producers.Mode))
	}
	phases := p.phases
	if phases[0].Name == "warmup" {
		// The shorthand: the first phase, called warmup, is the run's
		// warm-up (excluded from results) at its own rate.
		if p.nodes["warmup"] != nil {
			return p.errAt(p.nodes["warmup"], "warmup", "is given twice: by warmup and by the phase called warmup; remove one")
		}
		if len(phases) == 1 {
			return p.errAt(p.pnode, "phases", "has only a warmup phase: a run measures at least one phase after it")
		}
		w := phases[0]
		cfg.Warmup, cfg.WarmupRate, cfg.WarmupTimes = w.Duration, w.Rate, w.Times
		phases = phases[1:]
	}
	cfg.Phases = make([]conditions.Phase, len(phases))
	cfg.Duration = 0
	for i, ph := range phases {
		if ph.Times > 0 && cfg.Producers.Capacity <= 0 && cfg.Producers.CapacityProbe <= 0 {
			return p.errAt(p.pnode, fmt.Sprintf("phases[%d].rate", i), fmt.Sprintf("%gx is a multiple of the capacity, which nothing gives: set producers.capacity to jobs/s, or to measure (a closed-loop probe of the same backend and settings)", ph.Times))
		}
		if wi := i + len(p.phases) - len(phases); wi < len(p.phaseWork) && len(p.phaseWork[wi]) > 0 {
			w, err := phaseWorkload(*cfg, p.phaseWork[wi])
			if err != nil {
				return p.errAt(p.pnode, fmt.Sprintf("phases[%d]", i), err.Error())
			}
			ph.Work = w
		}
		cfg.Phases[i] = ph
		cfg.Duration += ph.Duration
	}
	if cfg.Producers.Capacity > 0 {
		cfg.SetCapacity(cfg.Producers.Capacity, cfg.Producers.CapacitySource)
	}
	cfg.Producers.Rate = cfg.Phases[0].Rate
	return nil
}

// placeFaults places the faults timed relative to a phase (at:
// overload+10s) on the run's clock of cfg; errors name the fault and
// what the profile offers.
func (p *parser) placeFaults(cfg *Config) error {
	spans := cfg.Spans()
	var names []string
	for _, sp := range spans {
		names = append(names, sp.Name)
	}
	start := func(name string) (time.Duration, bool) {
		for _, sp := range spans {
			if sp.Name == name {
				return sp.Start, true
			}
		}
		return 0, false
	}
	placed := make([]faults.Fault, len(cfg.Faults))
	for i, f := range cfg.Faults {
		g, err := f.ResolvePhases(start)
		if err != nil {
			msg := err.Error() + "; the scenario has no phases"
			if len(names) > 0 {
				bad := f.AtPhase[slices.IndexFunc(f.AtPhase, func(n string) bool { _, ok := start(n); return n != "" && !ok })]
				msg = err.Error() + suggest.DidYouMean(bad, names) + "; phases: " + strings.Join(names, ", ")
			}
			return &ConfigError{File: p.file, Line: f.Line, Column: f.Column, Field: fmt.Sprintf("faults[%d].at", i), Msg: msg}
		}
		placed[i] = g
	}
	cfg.Faults = placed
	return nil
}

// phaseWorkload is the workload of a phase that overrides cfg's: cfg's
// fields with the overrides applied, each by its field's own setter.
func phaseWorkload(cfg Config, overrides [][2]string) (*conditions.Workload, error) {
	c := cfg
	var names []string
	for _, o := range overrides {
		f, _ := fieldByPath(o[0])
		if err := f.set(&c, o[1]); err != nil {
			return nil, err
		}
		names = append(names, strings.TrimPrefix(strings.TrimPrefix(o[0], "producers."), "workers."))
	}
	w := c.WorkloadOf(-1)
	w.Overrides = names
	return &w, nil
}
