package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/backends/registry"
)

// TestJSONSchema: scenarios/scenario.schema.json is what the field table
// generates (they cannot drift), every shipped scenario validates against
// it, and a misspelt field does not.
func TestJSONSchema(t *testing.T) {
	gen, err := JSONSchema(registry.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile("../../scenarios/scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(gen), bytes.TrimSpace(shipped)) {
		t.Fatal("scenarios/scenario.schema.json differs from the field table: run aebench schema > scenarios/scenario.schema.json")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(gen))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	claims, _ := filepath.Glob("../../scenarios/claims/*.yaml")
	for _, f := range append(files, claims...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(asJSON(t, data)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := sch.Validate(asJSON(t, []byte("backends: [zset]\ndurration: 1s\n"))); err == nil {
		t.Error("a misspelt field validated")
	}
}

// asJSON is a YAML document as the JSON values a validator takes.
func asJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
