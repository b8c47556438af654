package scenario

import (
	"encoding/json"
	"strings"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
)

// SchemaID names the generated schema (scenarios/scenario.schema.json).
const SchemaID = "https://github.com/aebench/aebench/scenarios/scenario.schema.json"

// JSONSchema is a JSON Schema (draft 2020-12) of scenario files, made from
// the field table (FieldDocs), so the two cannot drift: every section is an
// object that allows its own fields only (an editor flags a typo), every
// field carries its doc, allowed values and default. Values are not typed:
// any field may be a list (a matrix), and the parser's own checks, with
// file, line and field, remain the judge.
func JSONSchema(reg *registry.Registry) ([]byte, error) {
	root := obj("An aebench scenario file (aebench list --fields; scenarios/README.md).")
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	for _, f := range FieldDocs(reg) {
		path, def, allowed, doc := f[0], f[1], f[2], f[3]
		parent := root
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			props := parent["properties"].(map[string]any)
			next, ok := props[p].(map[string]any)
			if !ok {
				next = obj("the " + p + " section")
				props[p] = next
			}
			parent = next
		}
		leaf := map[string]any{"description": doc + ". Allowed: " + allowed + ". Default: " + def + "."}
		switch path {
		case "backends":
			leaf["type"] = "array"
			leaf["items"] = map[string]any{"anyOf": []any{
				map[string]any{"type": "string", "enum": anyOf(reg.Names())},
				map[string]any{"type": "object", "required": []any{"name"}, "additionalProperties": false,
					"properties": map[string]any{"name": map[string]any{"enum": anyOf(reg.Names())}, "label": map[string]any{"type": "string"},
						"options": map[string]any{"type": "object"}}},
			}}
		case "thresholds":
			leaf["type"] = "array"
			leaf["items"] = map[string]any{"type": "string"}
		case "faults":
			leaf["type"] = "array"
			leaf["items"] = faultSchema()
		case "phases":
			leaf["type"] = "array"
			props := map[string]any{}
			for _, f := range phaseFields() {
				props[f] = map[string]any{"description": "the phase's " + f}
			}
			leaf["items"] = map[string]any{"type": "object", "required": []any{"name", "duration", "rate"}, "additionalProperties": false, "properties": props}
		case "jobs", "failure_windows":
			names, required := kindFieldNames(), []any{"name", "share"}
			if path == "failure_windows" {
				names, required = []string{"from", "for", "share", "class"}, []any{"from", "for", "share"}
			}
			props := map[string]any{}
			for _, f := range names {
				props[f] = map[string]any{"description": f}
			}
			leaf["type"] = "array"
			leaf["items"] = map[string]any{"type": "object", "required": required, "additionalProperties": false, "properties": props}
		}
		parent["properties"].(map[string]any)[parts[len(parts)-1]] = leaf
	}
	return json.MarshalIndent(root, "", "  ")
}

func obj(doc string) map[string]any {
	return map[string]any{"type": "object", "description": doc, "additionalProperties": false, "properties": map[string]any{}}
}

func anyOf(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// faultSchema is one entry of faults: its kind and the fields a fault takes.
func faultSchema() map[string]any {
	var kinds []string
	for _, k := range faults.Kinds() {
		kinds = append(kinds, string(k))
	}
	props := map[string]any{"kind": map[string]any{"enum": anyOf(kinds), "description": "the fault's kind (aebench list --fields: Faults)"}}
	for _, f := range []string{"at", "every", "from", "until", "point", "worker", "steps", "replace_after", "duration", "latency", "jitter", "fill", "ballast_ttl"} {
		props[f] = map[string]any{"description": "see the kind's fields (aebench list --fields)"}
	}
	return map[string]any{"type": "object", "required": []any{"kind"}, "additionalProperties": false, "properties": props}
}
