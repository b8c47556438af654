package scenario

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// topScalar sets one of the scenario's own scalar fields: name,
// description, repeats, calibration, matrix.
func (p *parser) topScalar(key string, v *yaml.Node, s *Scenario) error {
	switch key {
	case "name", "description":
		if v.Kind != yaml.ScalarNode {
			return p.errAt(v, key, "must be a string")
		}
		if key == "name" {
			if v.Value != "" && !validLabel(v.Value) {
				return p.errAt(v, key, fmt.Sprintf("%q: allowed are letters, digits, '-', '_' and '.'", v.Value))
			}
			s.Name = v.Value
		} else {
			s.Description = strings.TrimSpace(v.Value)
		}
	case "matrix":
		if v.Kind != yaml.ScalarNode || v.Value != "cross" && v.Value != "zip" {
			return p.errAt(v, key, "allowed: cross (every combination of the lists) or zip (the lists vary together)")
		}
		p.zip = v.Value == "zip"
	case "repeats":
		if v.Kind != yaml.ScalarNode {
			return p.errAt(v, key, "takes one integer 1..100, not a list")
		}
		if err := setInt(&s.Repeats, v.Value, 1, 100); err != nil {
			return p.errAt(v, key, err.Error()+"; allowed: an integer 1..100")
		}
	case "calibration":
		if v.Kind != yaml.ScalarNode {
			return p.errAt(v, key, "takes one value, not a list; allowed: off, on, or a duration > 0")
		}
		switch strings.ToLower(v.Value) {
		case "off", "false":
			s.Calibration = 0
		case "on", "true":
			s.Calibration = -1
		default:
			if err := setDur(&s.Calibration, v.Value, time.Millisecond, 24*time.Hour); err != nil {
				return p.errAt(v, key, err.Error()+"; allowed: off, on (same as duration), or a duration > 0, at most 24h")
			}
		}
	}
	return nil
}
