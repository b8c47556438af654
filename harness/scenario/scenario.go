package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/trace"
	"github.com/aebench/aebench/scenarios"
	"github.com/aebench/aebench/suggest"
)

// ConfigError is a problem with a scenario file or an override: it names the
// file and line (or the --set flag), the field and what is allowed. The CLI
// exits 2 on it.
type ConfigError struct {
	File   string // a path, or "--set producers.rate=..." for an override
	Line   int    // 0 when unknown
	Column int
	Field  string
	Msg    string
}

func (e *ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		return loc + ": " + e.Field + ": " + e.Msg
	}
	return loc + ": " + e.Msg
}

// Override replaces (or adds) one field of a scenario file, as `--set
// path=value` does. Value is YAML, so "[1000, 5000]" makes a matrix.
type Override struct {
	Path  string
	Value string
}

// ParseOverride reads "producers.rate=500".
func ParseOverride(s string) (Override, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return Override{}, &ConfigError{File: "--set " + s, Msg: "want path=value, e.g. producers.rate=500"}
	}
	return Override{Path: k, Value: strings.TrimSpace(v)}, nil
}

// LoadScenario reads and parses a scenario file with overrides applied,
// against the built-in backends.
func LoadScenario(path string, overrides ...Override) (*Scenario, error) {
	return Load(registry.Builtin(), path, overrides...)
}

// Load reads and parses a scenario file with overrides applied; backend
// names are checked against reg. A path that names no file but a shipped
// scenario ("quick", "scenarios/quick.yaml" outside the checkout) loads
// the one in the binary (package scenarios); a file on disk wins.
func Load(reg *registry.Registry, path string, overrides ...Override) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		shipped, name, ok := scenarios.Read(path)
		if !ok || !errors.Is(err, fs.ErrNotExist) {
			return nil, &ConfigError{File: path, Msg: fmt.Sprintf("cannot read scenario: %v (shipped scenarios: aebench list)", err)}
		}
		data, path = shipped, name
	}
	return Parse(reg, path, data, overrides...)
}

// ReadDescription reads only a scenario file's description, for listings:
// the rest of the file is not checked.
func ReadDescription(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		shipped, _, ok := scenarios.Read(path)
		if !ok {
			return "", fmt.Errorf("unreadable: %w", err)
		}
		data = shipped
	}
	var head struct {
		Description string `yaml:"description"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return "", errors.New("not valid YAML")
	}
	return head.Description, nil
}

var yamlLine = regexp.MustCompile(`^line \d+`)

// syntaxErrorLine is the line where a file stops being valid YAML: the
// line after the longest prefix of whole lines that still parses. The
// parser's own "line N" names where the construct it was in began, off by
// one for flow collections (an unclosed '[' on line 2 reads "line 1"), so
// it is not used. 1 when even the first line fails on its own.
func syntaxErrorLine(data []byte) int {
	lines := strings.SplitAfter(string(data), "\n")
	for n := len(lines) - 1; n > 0; n-- {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(lines[:n], "")), &doc) == nil {
			return n + 1
		}
	}
	return 1
}

// ParseScenario parses a scenario file's bytes against the built-in
// backends; file names it in errors.
func ParseScenario(file string, data []byte, overrides ...Override) (*Scenario, error) {
	return Parse(registry.Builtin(), file, data, overrides...)
}

// Parse parses a scenario file's bytes; file names it in errors, and
// backend names are checked against reg (nil: the built-in backends).
func Parse(reg *registry.Registry, file string, data []byte, overrides ...Override) (*Scenario, error) {
	if reg == nil {
		reg = registry.Builtin()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := yamlLine.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
		ce := &ConfigError{File: file, Msg: "not valid YAML: " + strings.TrimPrefix(msg, ": ")}
		if ce.Line = syntaxErrorLine(data); ce.Line > 0 {
			ce.Column = 1
		}
		if lines := strings.Split(string(data), "\n"); ce.Line > 0 && ce.Line <= len(lines) && strings.Contains(lines[ce.Line-1], "\t") ||
			strings.Contains(msg, "tab") {
			ce.Msg += " (a tab: YAML allows no tabs in indentation; indent with spaces)"
		}
		return nil, ce
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Line: 1, Column: 1}
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	p := &parser{reg: reg, file: file, origin: map[*yaml.Node]string{}, vals: map[string][]string{}, nodes: map[string]*yaml.Node{}}
	if root.Kind != yaml.MappingNode {
		return nil, p.errAt(root, "", "the file must be a mapping of fields (name:, duration:, producers:, ...)")
	}
	for _, o := range overrides {
		if err := p.applyOverride(root, o); err != nil {
			return nil, err
		}
	}
	s := &Scenario{File: file, Source: data, Repeats: 1, Calibration: -1, reg: reg}
	for _, o := range overrides {
		s.Overrides = append(s.Overrides, o.Path+"="+o.Value)
	}
	if err := p.walk(root, s); err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if err := p.expand(s); err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	reg  *registry.Registry
	file string
	// origin marks nodes that came from an override, for error messages.
	origin   map[*yaml.Node]string
	vals     map[string][]string // field path -> values (more than one: a matrix)
	nodes    map[string]*yaml.Node
	backends []BackendSpec
	optDims  []optionDim // backend options given a list of values
	bnode    *yaml.Node
	faults   []faults.Fault
	fnode    *yaml.Node
	// phases is the load profile (phases:), pnode where it was written.
	phases []conditions.Phase
	// phaseWork: each phase's workload overrides, as written (field path,
	// value), in order.
	phaseWork [][][2]string
	pnode     *yaml.Node
	// jobs: the job mix as written; failWindows the retry storms; jnode
	// and wnode where each was written.
	jobs         []kindSpec
	failWindows  []conditions.FailWindow
	jnode, wnode *yaml.Node
	warnings     []string
	// traces: the parsed producers.trace files, by name.
	traces map[string]*trace.Trace
	// zip: matrix zip (the lists vary together) instead of their cross product.
	zip bool
}

func (p *parser) errAt(n *yaml.Node, fieldPath, msg string) error {
	e := p.locate(n, fieldPath)
	e.Msg = msg
	return &e
}

// locate is where n was written: the file and line, or the --set override
// it came from.
func (p *parser) locate(n *yaml.Node, fieldPath string) ConfigError {
	if o, ok := p.origin[n]; ok {
		return ConfigError{File: o, Field: fieldPath}
	}
	e := ConfigError{File: p.file, Field: fieldPath}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// applyOverride replaces or adds the node at o.Path in root.
func (p *parser) applyOverride(root *yaml.Node, o Override) error {
	src := "--set " + o.Path + "=" + o.Value
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(o.Value), &vdoc); err != nil {
		return &ConfigError{File: src, Field: o.Path, Msg: "value is not valid YAML: " + err.Error()}
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	if len(vdoc.Content) > 0 {
		val = vdoc.Content[0]
	}
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		p.origin[n] = src
		for _, c := range n.Content {
			mark(c)
		}
	}
	mark(val)
	parts := strings.Split(o.Path, ".")
	m := root
	for i, part := range parts {
		last := i == len(parts)-1
		var found *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == part {
				found = m.Content[j+1]
				if last {
					m.Content[j+1] = val
				}
				break
			}
		}
		if last {
			if found == nil {
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part}
				p.origin[k] = src
				m.Content = append(m.Content, k, val)
			}
			return nil
		}
		if found == nil {
			found = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: part}
			p.origin[k], p.origin[found] = src, src
			m.Content = append(m.Content, k, found)
		}
		if found.Kind != yaml.MappingNode {
			return &ConfigError{File: src, Field: o.Path, Msg: fmt.Sprintf("%q is not a section", strings.Join(parts[:i+1], "."))}
		}
		m = found
	}
	return nil
}

func fieldByPath(path string) (field, bool) {
	for _, f := range fields() {
		if f.Path == path {
			return f, true
		}
	}
	return field{}, false
}

// allowedKeys lists what may appear in a section ("" is the top level).
func allowedKeys(section string) []string {
	var out []string
	if section == "" {
		out = append(out, topLevel...)
		out = append(out, sections...)
	}
	for _, f := range fields() {
		sec, key, ok := strings.Cut(f.Path, ".")
		switch {
		case section == "" && !ok:
			out = append(out, sec)
		case ok && sec == section:
			out = append(out, key)
		}
	}
	return out
}

func (p *parser) walk(root *yaml.Node, s *Scenario) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		key := k.Value
		if seen[key] {
			return p.errAt(k, key, "appears twice")
		}
		seen[key] = true
		switch {
		case slices.Contains(sections, key):
			if v.Kind != yaml.MappingNode {
				return p.errAt(v, key, "must be a mapping of: "+strings.Join(allowedKeys(key), ", "))
			}
			sub := map[string]bool{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				sk, sv := v.Content[j], resolve(v.Content[j+1])
				path := key + "." + sk.Value
				if sub[sk.Value] {
					return p.errAt(sk, path, "appears twice")
				}
				sub[sk.Value] = true
				f, ok := fieldByPath(path)
				if !ok {
					return p.errAt(sk, key, fmt.Sprintf("unknown field %q%s; allowed: %s", sk.Value, suggest.DidYouMean(sk.Value, allowedKeys(key)), strings.Join(allowedKeys(key), ", ")))
				}
				if err := p.values(f, sv); err != nil {
					return err
				}
			}
		case key == "backends":
			bs, err := p.parseBackends(v)
			if err != nil {
				return err
			}
			p.backends, p.bnode = bs, v
		case key == "faults":
			if err := p.parseFaults(v); err != nil {
				return err
			}
		case key == "phases":
			ph, err := p.parsePhases(v)
			if err != nil {
				return err
			}
			p.phases, p.pnode = ph, v
		case key == "jobs" || key == "failure_windows":
			if err := p.parseMixKey(key, v); err != nil {
				return err
			}
		case key == "thresholds":
			ths, err := p.parseThresholds(v)
			if err != nil {
				return err
			}
			s.Thresholds = ths
		case key == "name" || key == "description" || key == "repeats" || key == "calibration" || key == "matrix":
			if err := p.topScalar(key, v, s); err != nil {
				return err
			}
		default:
			f, ok := fieldByPath(key)
			if !ok {
				return p.errAt(k, "", fmt.Sprintf("unknown field %q%s; allowed: %s", key, suggest.DidYouMean(key, allowedKeys("")), strings.Join(allowedKeys(""), ", ")))
			}
			if err := p.values(f, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseFaults reads faults:, its errors placed in the scenario's file.
func (p *parser) parseFaults(v *yaml.Node) error {
	fs, err := faults.Parse(v)
	if err != nil {
		var fe *faults.Error
		if errors.As(err, &fe) {
			at := &yaml.Node{Line: fe.Line, Column: fe.Column}
			if o, ok := p.origin[v]; ok {
				return &ConfigError{File: o, Field: fe.Field, Msg: fe.Msg}
			}
			return p.errAt(at, fe.Field, fe.Msg)
		}
		return p.errAt(v, "faults", err.Error())
	}
	p.faults, p.fnode = fs, v
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// values records a field's value or list of values, checking each.
func (p *parser) values(f field, n *yaml.Node) error {
	check := func(item *yaml.Node) (string, error) {
		if item.Kind != yaml.ScalarNode {
			return "", p.errAt(item, f.Path, "expects a value, not a mapping or nested list; allowed: "+f.Allowed)
		}
		if item.Tag == "!!null" {
			return "", p.errAt(item, f.Path, "needs a value; allowed: "+f.Allowed)
		}
		var scratch Config
		if err := f.set(&scratch, item.Value); err != nil {
			return "", p.errAt(item, f.Path, err.Error()+"; allowed: "+f.Allowed)
		}
		return item.Value, nil
	}
	p.nodes[f.Path] = n
	switch n.Kind {
	case yaml.SequenceNode:
		if !f.Matrix {
			return p.errAt(n, f.Path, "takes one value, not a list")
		}
		if len(n.Content) == 0 {
			return p.errAt(n, f.Path, "an empty list; give one value or several (a matrix); allowed: "+f.Allowed)
		}
		var vs []string
		for _, item := range n.Content {
			v, err := check(resolve(item))
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		p.vals[f.Path] = vs
	default:
		v, err := check(n)
		if err != nil {
			return err
		}
		p.vals[f.Path] = []string{v}
	}
	return nil
}

// maxCells bounds a matrix so a typo does not plan a week of runs.
const maxCells = 256

// dim is one dimension of the matrix: a field's values, or a backend
// option's (opt set).
type dim struct {
	f    field
	opt  *optionDim
	vals []string
}

// expand builds the matrix cells: the cross product of every list-valued
// field, in the schema's order, with backends innermost.
func (p *parser) expand(s *Scenario) error {
	if p.backends == nil {
		return &ConfigError{File: p.file, Field: "backends", Msg: "required: a list of backend names; allowed: " + strings.Join(p.reg.Names(), ", ")}
	}
	dims := p.dims()
	total, err := p.cellCount(dims)
	if err != nil {
		return err
	}
	idx := make([]int, len(dims))
	for c := 0; c < total; c++ {
		if p.zip {
			for i, d := range dims {
				idx[i] = min(c, len(d.vals)-1)
			}
		}
		cell, err := p.cell(s, dims, idx)
		if err != nil {
			return err
		}
		cell.Index = c + 1
		s.Cells = append(s.Cells, cell)
		// Advance the odometer, last dimension fastest.
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(dims[i].vals) {
				break
			}
			idx[i] = 0
		}
	}
	if s.Calibration < 0 {
		s.Calibration = s.Cells[0].Base.Duration
	}
	s.Warnings = p.warnings
	return nil
}

// dims lists the matrix's dimensions: every field (its default when not
// given), then the backend options given as lists.
func (p *parser) dims() []dim {
	var dims []dim
	for _, f := range fields() {
		vs := p.vals[f.Path]
		if len(vs) == 0 {
			vs = []string{f.Default}
		}
		dims = append(dims, dim{f: f, vals: vs})
	}
	for i := range p.optDims {
		d := &p.optDims[i]
		dims = append(dims, dim{f: field{Path: d.path}, opt: d, vals: d.vals})
		p.nodes[d.path] = d.node
	}
	return dims
}

// cellCount is the number of cells: the product of the lists' lengths, or
// with matrix zip their common length.
func (p *parser) cellCount(dims []dim) (int, error) {
	total := 1
	for _, d := range dims {
		f, vs := d.f, d.vals
		if p.zip {
			if len(vs) > 1 && total > 1 && len(vs) != total {
				return 0, p.errAt(p.nodes[f.Path], f.Path, fmt.Sprintf("has %d values, but matrix: zip needs every list of one length (%d)", len(vs), total))
			}
			total = max(total, len(vs))
			continue
		}
		total *= len(vs)
		if total > maxCells {
			return 0, p.errAt(p.nodes[f.Path], f.Path, fmt.Sprintf("the matrix has more than %d cells; shorten the lists", maxCells))
		}
	}
	return total, nil
}

// cell builds the cell whose value of dimension i is dims[i].vals[idx[i]].
func (p *parser) cell(s *Scenario, dims []dim, idx []int) (Cell, error) {
	cfg := Config{Scenario: s.Name, Faults: p.faults}
	var vary []string
	optSet := map[int]map[string]string{}
	for i, d := range dims {
		v := d.vals[idx[i]]
		if d.opt != nil {
			if optSet[d.opt.backend] == nil {
				optSet[d.opt.backend] = map[string]string{}
			}
			optSet[d.opt.backend][d.opt.key] = v
		} else if err := d.f.set(&cfg, v); err != nil {
			return Cell{}, p.errAt(p.nodes[d.f.Path], d.f.Path, err.Error()+"; allowed: "+d.f.Allowed)
		}
		if len(d.vals) > 1 {
			vary = append(vary, d.f.Path+"="+v)
		}
	}
	if err := p.applyPhases(&cfg); err != nil {
		return Cell{}, err
	}
	if err := p.placeFaults(&cfg); err != nil {
		return Cell{}, err
	}
	if err := p.applyTrace(&cfg); err != nil {
		return Cell{}, err
	}
	if err := p.applyMix(&cfg); err != nil {
		return Cell{}, err
	}
	if err := p.sizeMaxMemory(&cfg); err != nil {
		return Cell{}, err
	}
	// The recovery mode decides the heartbeat: lease renews it, seed never
	// does (seed 002's timeout from StartedAt).
	switch cfg.Workers.RecoveryMode {
	case "lease":
		cfg.Workers.Heartbeat = true
	case "seed":
		cfg.Workers.Heartbeat = false
	}
	if err := p.crossCheck(cfg); err != nil {
		return Cell{}, err
	}
	return Cell{Vary: vary, Base: cfg, Backends: withOptions(p.backends, optSet)}, nil
}
