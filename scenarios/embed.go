// Package scenarios ships the scenario files in the binary, so that
// `aebench list` shows them and `aebench run quick` runs one from any
// directory. A file path given to aebench is read from disk and wins over
// a shipped scenario of the same name.
package scenarios

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed *.yaml *.csv claims/*.yaml
var files embed.FS

// FS is the shipped scenario files: NAME.yaml and claims/NAME.yaml.
func FS() fs.FS { return files }

// Read returns the shipped scenario called name ("quick", "quick.yaml",
// "claims/flaw-seed004"), and the path it is shipped under.
func Read(name string) ([]byte, string, bool) {
	p := strings.TrimPrefix(path.Clean(name), "scenarios/")
	if !strings.HasSuffix(p, ".yaml") {
		p += ".yaml"
	}
	data, err := files.ReadFile(p)
	if err != nil {
		return nil, "", false
	}
	return data, "scenarios/" + p, true
}

// Names lists the shipped scenarios' paths ("scenarios/quick.yaml"), sorted.
func Names() []string {
	var out []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			out = append(out, "scenarios/"+p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// ReadData returns a data file shipped beside the scenarios (a trace:
// "scenarios/trace-sample.csv" or "trace-sample.csv").
func ReadData(name string) ([]byte, bool) {
	data, err := files.ReadFile(strings.TrimPrefix(path.Clean(name), "scenarios/"))
	return data, err == nil
}
