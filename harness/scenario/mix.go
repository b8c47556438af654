package scenario

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/suggest"
)

// kindFields are the fields of one entry of jobs:, with the scenario
// field each takes its default from (and its rules).
func kindFields() map[string]string {
	return map[string]string{"name": "", "share": "", "payload": "producers.payload", "handler": "workers.handler",
		"fail": "workers.fail", "fail_class": "", "delayed": "producers.delayed", "delay": "producers.delay",
		"max_retries": "producers.max_retries", "tenants": "", "queue": "", "priority": ""}
}

func kindFieldNames() []string {
	return []string{"name", "share", "payload", "handler", "fail", "fail_class", "delayed", "delay", "max_retries", "tenants", "queue", "priority"}
}

// kindSpec is one entry of jobs: as written: its name, share and tenants,
// and the workload fields it sets (scenario field path, value), applied
// per cell over that cell's defaults.
type kindSpec struct {
	kind conditions.JobKind
	work [][2]string
}

// jobsAllowed is what jobs: takes.
const jobsAllowed = "a list of kinds {name, share, payload, handler, fail, fail_class, delayed, delay, max_retries, tenants}, shares summing to 1, " +
	"e.g. [{name: short, share: 0.8, handler: 2ms}, {name: long, share: 0.2, handler: 200ms, tenants: \"noisy(100, 0.5)\"}]"

// parseMixKey reads jobs: or failure_windows:.
func (p *parser) parseMixKey(key string, v *yaml.Node) error {
	if key == "jobs" {
		js, err := p.parseJobs(v)
		p.jobs, p.jnode = js, v
		return err
	}
	ws, err := p.parseFailWindows(v)
	p.failWindows, p.wnode = ws, v
	return err
}

// parseJobs reads the jobs: list. Errors name the entry and the field.
func (p *parser) parseJobs(n *yaml.Node) ([]kindSpec, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errAt(n, "jobs", "must be a non-empty list; allowed: "+jobsAllowed)
	}
	var out []kindSpec
	names := map[string]bool{}
	var sum float64
	var shares []string
	for i, item := range n.Content {
		item = resolve(item)
		field := fmt.Sprintf("jobs[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, p.errAt(item, field, "must be a mapping; allowed: "+jobsAllowed)
		}
		ks, err := p.jobKind(item, field)
		if err != nil {
			return nil, err
		}
		if names[ks.kind.Name] {
			return nil, p.errAt(item, field+".name", fmt.Sprintf("%q names two kinds: each kind needs its own name", ks.kind.Name))
		}
		names[ks.kind.Name] = true
		sum += ks.kind.Share
		shares = append(shares, fmt.Sprintf("%s %g", ks.kind.Name, ks.kind.Share))
		out = append(out, ks)
	}
	if math.Abs(sum-1) > 1e-9 {
		return nil, p.errAt(n, "jobs[].share", fmt.Sprintf("the kinds' shares sum to %g (%s): they must sum to 1", sum, strings.Join(shares, ", ")))
	}
	return out, nil
}

// jobKind reads one kind.
func (p *parser) jobKind(item *yaml.Node, field string) (kindSpec, error) {
	var ks kindSpec
	seen := map[string]bool{}
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], resolve(item.Content[j+1])
		at := field + "." + k.Value
		if v.Kind != yaml.ScalarNode {
			return ks, p.errAt(v, at, "expects a value")
		}
		seen[k.Value] = true
		path, known := kindFields()[k.Value]
		var err error
		switch {
		case !known:
			err = fmt.Errorf("unknown field %q%s; allowed: %s", k.Value, suggest.DidYouMean(k.Value, kindFieldNames()), strings.Join(kindFieldNames(), ", "))
			at = field
		case k.Value == "name":
			ks.kind.Name = strings.TrimSpace(v.Value)
			if !validLabel(ks.kind.Name) {
				err = fmt.Errorf("%q: allowed are letters, digits, '-', '_' and '.'", v.Value)
			}
		case k.Value == "share":
			ks.kind.Share, err = strconv.ParseFloat(v.Value, 64)
			if err != nil || ks.kind.Share <= 0 || ks.kind.Share > 1 {
				err = fmt.Errorf("%q: allowed: a share > 0, at most 1", v.Value)
			}
		case k.Value == "fail_class":
			ks.kind.FailClass = v.Value
			if v.Value != conditions.FailRateLimit && v.Value != conditions.FailFatal {
				err = fmt.Errorf("%q%s; allowed: %s", v.Value, suggest.DidYouMean(v.Value, conditions.FailClasses()), strings.Join(conditions.FailClasses(), ", "))
			}
		case k.Value == "tenants":
			if ks.kind.Tenants, err = conditions.ParseTenants(v.Value); err != nil {
				err = fmt.Errorf("%w; allowed: %s", err, conditions.TenantsAllowed)
			}
		case k.Value == "queue":
			ks.kind.Queue = strings.TrimSpace(v.Value)
		case k.Value == "priority":
			err = fmt.Errorf("a priority is a queue's place in store.queues (the first is the highest under store.queue_policy strict): give the kind a queue instead")
		default:
			f, _ := fieldByPath(path)
			var scratch Config
			if err = f.set(&scratch, v.Value); err != nil {
				err = fmt.Errorf("%w; allowed: %s (as %s)", err, f.Allowed, path)
			}
			ks.work = append(ks.work, [2]string{path, v.Value})
		}
		if err != nil {
			return ks, p.errAt(v, at, err.Error())
		}
	}
	for _, f := range []string{"name", "share"} {
		if !seen[f] {
			return ks, p.errAt(item, field+"."+f, "is required")
		}
	}
	return ks, nil
}

// failWindowAllowed is what failure_windows: takes.
const failWindowAllowed = "a list of {from, for, share, class}: from and for durations from the measured window's start, share 0..1 of the attempts of the jobs intended in it, class rate_limit or fatal, " +
	"e.g. [{from: 60s, for: 60s, share: 0.3, class: rate_limit}]"

// parseFailWindows reads failure_windows:.
func (p *parser) parseFailWindows(n *yaml.Node) ([]conditions.FailWindow, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errAt(n, "failure_windows", "must be a non-empty list; allowed: "+failWindowAllowed)
	}
	var out []conditions.FailWindow
	for i, item := range n.Content {
		item = resolve(item)
		field := fmt.Sprintf("failure_windows[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, p.errAt(item, field, "must be a mapping; allowed: "+failWindowAllowed)
		}
		w, err := p.failWindow(item, field)
		if err != nil {
			return nil, err
		}
		for j, o := range out {
			if w.From < o.From+o.For && o.From < w.From+w.For {
				return nil, p.errAt(item, field, fmt.Sprintf("overlaps failure_windows[%d]: windows must not overlap", j))
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func (p *parser) failWindow(item *yaml.Node, field string) (conditions.FailWindow, error) {
	w := conditions.FailWindow{Class: conditions.FailRateLimit}
	seen := map[string]bool{}
	fields := []string{"from", "for", "share", "class"}
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], resolve(item.Content[j+1])
		at := field + "." + k.Value
		if v.Kind != yaml.ScalarNode {
			return w, p.errAt(v, at, "expects a value")
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "from", "for":
			var d time.Duration
			d, err = time.ParseDuration(v.Value)
			switch {
			case err != nil || d < 0 || d > 24*time.Hour || k.Value == "for" && d == 0:
				err = fmt.Errorf("%q: allowed: a duration (60s), from >= 0, for > 0, at most 24h", v.Value)
			case k.Value == "from":
				w.From = d
			default:
				w.For = d
			}
		case "share":
			w.Share, err = strconv.ParseFloat(v.Value, 64)
			if err != nil || w.Share <= 0 || w.Share > 1 {
				err = fmt.Errorf("%q: allowed: a share of the attempts > 0, at most 1", v.Value)
			}
		case "class":
			w.Class = v.Value
			if v.Value != conditions.FailRateLimit && v.Value != conditions.FailFatal {
				err = fmt.Errorf("%q%s; allowed: %s", v.Value, suggest.DidYouMean(v.Value, conditions.FailClasses()), strings.Join(conditions.FailClasses(), ", "))
			}
		default:
			err = fmt.Errorf("unknown field %q%s; allowed: %s", k.Value, suggest.DidYouMean(k.Value, fields), strings.Join(fields, ", "))
			at = field
		}
		if err != nil {
			return w, p.errAt(v, at, err.Error())
		}
	}
	for _, f := range []string{"from", "for", "share"} {
		if !seen[f] {
			return w, p.errAt(item, field+"."+f, "is required")
		}
	}
	return w, nil
}

// applyMix puts the job mix and the failure windows in a cell's
// conditions: each kind's workload is the cell's with the kind's fields
// applied by their own setters.
func (p *parser) applyMix(cfg *Config) error {
	if len(p.jobs) > 0 {
		switch {
		case cfg.Producers.Trace != "":
			return p.errAt(p.jnode, "jobs", "a trace replays its own jobs: give jobs: or producers.trace, not both")
		case hasPhaseWork(cfg.Phases):
			return p.errAt(p.jnode, "jobs", "the kinds give each job its workload: phases may not override it beside jobs: (remove the phases' delayed, delay, handler, fail and payload)")
		}
	}
	cfg.Jobs = nil
	for i, ks := range p.jobs {
		c := *cfg
		for _, o := range ks.work {
			f, _ := fieldByPath(o[0])
			if err := f.set(&c, o[1]); err != nil {
				return p.errAt(p.jnode, fmt.Sprintf("jobs[%d]", i), err.Error())
			}
		}
		k := ks.kind
		w := c.WorkloadOf(-1)
		k.Payload, k.Handler, k.HandlerText, k.Fail = w.Payload, w.Handler, w.HandlerText, w.Fail
		k.Delayed, k.Delay, k.DelayText, k.MaxRetries = w.Delayed, w.Delay, w.DelayText, c.Producers.MaxRetries
		if k.FailClass == "" {
			k.FailClass = conditions.FailRateLimit
		}
		if k.Tenants.Dist == "" {
			k.Tenants = conditions.Tenants{Dist: "one", N: 1}
		}
		cfg.Jobs = append(cfg.Jobs, k)
	}
	if err := p.checkQueues(cfg); err != nil {
		return err
	}
	cfg.FailWindows = p.failWindows
	for i, w := range p.failWindows {
		if w.From+w.For > cfg.Duration {
			return p.errAt(p.wnode, fmt.Sprintf("failure_windows[%d]", i), fmt.Sprintf("ends at %s, after the measured window (%s): a window lies within it", w.From+w.For, cfg.Duration))
		}
	}
	cfg.PrepareMix()
	return nil
}

func hasPhaseWork(phases []conditions.Phase) bool {
	for _, ph := range phases {
		if ph.Work != nil {
			return true
		}
	}
	return false
}

// checkQueues holds the kinds' queues to store.queues, and store.queues
// to the backends that can be split into queues (job stores and the
// floor: jobstore.CapQueues through backends/queues).
func (p *parser) checkQueues(cfg *Config) error {
	var names []string
	for _, q := range cfg.Store.Queues {
		names = append(names, q.Name)
	}
	for i, k := range cfg.Jobs {
		switch {
		case k.Queue != "" && len(names) == 0:
			return p.errAt(p.jnode, fmt.Sprintf("jobs[%d].queue", i), fmt.Sprintf("%q: the store has one queue: name its queues in store.queues (\"high low\") to give kinds queues", k.Queue))
		case k.Queue != "" && !slices.Contains(names, k.Queue):
			return p.errAt(p.jnode, fmt.Sprintf("jobs[%d].queue", i), fmt.Sprintf("%q%s is not a queue of store.queues; allowed: %s", k.Queue, suggest.DidYouMean(k.Queue, names), strings.Join(names, ", ")))
		}
	}
	if len(names) == 0 {
		return nil
	}
	if cfg.Store.Shards > 1 {
		return p.errAt(p.nodes["store.queues"], "store.queues", "queues and store.shards do not combine: give one")
	}
	for _, b := range p.backends {
		be, err := p.reg.Lookup(b.Name)
		switch {
		case err != nil || be.Shardable():
		case len(be.NativeQueues) == 0:
			return p.errAt(p.nodes["store.queues"], "store.queues", fmt.Sprintf("backend %s (%s) does not declare the queues capability: only job stores, the floor (split by backends/queues) and peers with queues of their own (asynq) take store.queues; run it in a scenario without store.queues", b.Name, be.Kind))
		case !slices.Contains(be.NativeQueues, cfg.Store.QueuePolicy) && !slices.ContainsFunc(p.vals["store.queue_policy"], func(v string) bool { return slices.Contains(be.NativeQueues, v) }):
			// In a matrix of policies, a cell whose policy the peer does
			// not serve is not applicable (the runner says why); a
			// scenario none of whose policies it serves is refused.
			return p.errAt(p.nodes["store.queue_policy"], "store.queue_policy", fmt.Sprintf("backend %s claims from its queues %s only, not %s", b.Name, strings.Join(be.NativeQueues, " or "), cfg.Store.QueuePolicy))
		}
	}
	return nil
}
