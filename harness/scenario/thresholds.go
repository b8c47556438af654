package scenario

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Threshold is one entry of a scenario's thresholds block, as written
// (`e2e.p99 < 20ms`), with where it was written so a checker that finds it
// malformed can name the file, line and field.
type Threshold struct {
	Expr string
	at   ConfigError
}

// Error is a *ConfigError for this threshold: its file, line and field,
// and msg.
func (t Threshold) Error(msg string) error {
	e := t.at
	e.Msg = msg
	return &e
}

// parseThresholds reads the thresholds block: a list of strings.
func (p *parser) parseThresholds(n *yaml.Node) ([]Threshold, error) {
	const allowed = "a list of strings METRIC OP VALUE, e.g. [\"e2e.p99 < 20ms\", \"throughput > 10000\"]"
	if n.Kind != yaml.SequenceNode {
		return nil, p.errAt(n, "thresholds", "must be "+allowed)
	}
	out := make([]Threshold, 0, len(n.Content))
	for i, item := range n.Content {
		item = resolve(item)
		field := fmt.Sprintf("thresholds[%d]", i)
		if item.Kind != yaml.ScalarNode || item.Value == "" {
			return nil, p.errAt(item, field, "must be a non-empty string; allowed: "+allowed)
		}
		out = append(out, Threshold{Expr: item.Value, at: p.locate(item, field)})
	}
	return out, nil
}
