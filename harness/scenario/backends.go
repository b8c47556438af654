package scenario

import (
	"fmt"
	"maps"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/suggest"
)

var labelRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func validLabel(s string) bool { return labelRE.MatchString(s) }

func (p *parser) parseBackends(n *yaml.Node) ([]BackendSpec, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	if len(items) == 0 {
		return nil, p.errAt(n, "backends", "an empty list; allowed: "+strings.Join(p.reg.Names(), ", "))
	}
	var out []BackendSpec
	var swept []optionDim
	labels := map[string]bool{}
	for i, item := range items {
		item = resolve(item)
		fp := fmt.Sprintf("backends[%d]", i)
		b, nameNode, optNode, dims, err := p.backendEntry(item, i, fp)
		if err != nil {
			return nil, err
		}
		swept = append(swept, dims...)
		be, err := p.reg.Lookup(b.Name)
		if err != nil {
			return nil, p.errAt(nameNode, fp, err.Error()+suggest.DidYouMean(b.Name, p.reg.Names()))
		}
		if len(b.Options) > 0 {
			if err := registry.CheckKeys(b.Name, b.Options, be.Options); err != nil {
				return nil, p.errAt(optNode, fp+".options", strings.TrimPrefix(err.Error(), "jobstore: invalid argument: "))
			}
		}
		if b.Label == "" {
			b.Label = b.Name
		}
		at := item
		if optNode != nil {
			at = optNode
		}
		if _, fromFlag := p.origin[at]; !fromFlag {
			b.Line, b.Col = at.Line, at.Column
		}
		if labels[b.Label] {
			return nil, p.errAt(item, fp, fmt.Sprintf("label %q is used twice; give one of them a label:", b.Label))
		}
		labels[b.Label] = true
		out = append(out, b)
	}
	for _, d := range swept {
		d.path = out[d.backend].Label + ".options." + d.key
		p.optDims = append(p.optDims, d)
	}
	return out, nil
}

// backendEntry reads the i-th entry of backends (at field path fp): a name,
// or a mapping of name, label and options. It returns the nodes of the
// name and the options (for errors) and the options given as lists.
func (p *parser) backendEntry(item *yaml.Node, i int, fp string) (b BackendSpec, nameNode, optNode *yaml.Node, swept []optionDim, err error) {
	switch item.Kind {
	case yaml.ScalarNode:
		b.Name, nameNode = item.Value, item
		return b, nameNode, nil, nil, nil
	case yaml.MappingNode:
	default:
		return b, nil, nil, nil, p.errAt(item, fp, "must be a backend name or a mapping with name, label, options")
	}
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], resolve(item.Content[j+1])
		switch k.Value {
		case "name":
			b.Name, nameNode = v.Value, v
		case "label":
			if v.Kind != yaml.ScalarNode || !validLabel(v.Value) {
				return b, nil, nil, nil, p.errAt(v, fp+".label", "allowed are letters, digits, '-', '_' and '.'")
			}
			b.Label = v.Value
		case "options":
			if v.Kind != yaml.MappingNode {
				return b, nil, nil, nil, p.errAt(v, fp+".options", "must be a mapping of option: value")
			}
			optNode = v
			b.Options = map[string]string{}
			for m := 0; m+1 < len(v.Content); m += 2 {
				key, ov := v.Content[m].Value, resolve(v.Content[m+1])
				vals, err := p.optionValues(ov, fp+".options."+key)
				if err != nil {
					return b, nil, nil, nil, err
				}
				b.Options[key] = vals[0]
				if len(vals) > 1 {
					swept = append(swept, optionDim{backend: i, key: key, vals: vals, node: ov})
				}
			}
		default:
			return b, nil, nil, nil, p.errAt(k, fp, fmt.Sprintf("unknown field %q; allowed: name, label, options", k.Value))
		}
	}
	if nameNode == nil {
		return b, nil, nil, nil, p.errAt(item, fp, "needs a name; allowed: "+strings.Join(p.reg.Names(), ", "))
	}
	return b, nameNode, optNode, swept, nil
}

// optionDim is a backend option given a list of values: a matrix
// dimension like a list-valued field, named <label>.options.<key>.
type optionDim struct {
	backend   int // index in the backends list
	key, path string
	vals      []string
	node      *yaml.Node
}

// optionValues reads one backend option: a value, or a list of values (a
// sweep of the option, as a list-valued field is).
func (p *parser) optionValues(n *yaml.Node, fieldPath string) ([]string, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) == 0 {
			return nil, p.errAt(n, fieldPath, "an empty list; give one value or several (a sweep of the option)")
		}
		items = n.Content
	}
	var vals []string
	for _, it := range items {
		if it = resolve(it); it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
			return nil, p.errAt(it, fieldPath, "must be a value or a list of values")
		}
		vals = append(vals, it.Value)
	}
	return vals, nil
}

// withOptions returns bs with the options of one cell's option dimensions
// set (a copy: the cells must not share the maps).
func withOptions(bs []BackendSpec, set map[int]map[string]string) []BackendSpec {
	if len(set) == 0 {
		return bs
	}
	out := append([]BackendSpec(nil), bs...)
	for i, kv := range set {
		opts := maps.Clone(out[i].Options)
		maps.Copy(opts, kv)
		out[i].Options = opts
	}
	return out
}

// matchBackends is what --backends n selects from a cell: the entry
// labelled n; else the entries of backend n under their own name (bullmq,
// not bullmq-native); else every entry of backend n.
func matchBackends(bs []BackendSpec, n string) []BackendSpec {
	for _, by := range []func(BackendSpec) bool{
		func(b BackendSpec) bool { return b.Label == n },
		func(b BackendSpec) bool { return b.Name == n && b.Label == b.Name },
		func(b BackendSpec) bool { return b.Name == n },
	} {
		var out []BackendSpec
		for _, b := range bs {
			if by(b) {
				out = append(out, b)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// SelectBackends keeps only the named backends (names or labels) in every
// cell, in the order given; a name the file does not list is added with no
// options. It is the CLI's --backends.
func (s *Scenario) SelectBackends(names []string) error {
	for i := range s.Cells {
		var keep []BackendSpec
		for _, n := range names {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			matched := matchBackends(s.Cells[i].Backends, n)
			keep = append(keep, matched...)
			found := len(matched) > 0
			if !found {
				if _, err := s.registry().Lookup(n); err != nil {
					return &ConfigError{File: "--backends", Msg: err.Error()}
				}
				keep = append(keep, BackendSpec{Name: n, Label: n})
			}
		}
		if len(keep) == 0 {
			return &ConfigError{File: "--backends", Msg: "no backend selected; allowed: " + strings.Join(s.registry().Names(), ", ")}
		}
		s.Cells[i].Backends = keep
	}
	s.Overrides = append(s.Overrides, "--backends "+strings.Join(names, ","))
	return nil
}
