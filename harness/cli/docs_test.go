package cli

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/scenario"
)

// docCommands returns the commands the README and docs/ show: every line of
// a fenced code block and every inline code span, keyed by file.
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md", "../../scenarios/README.md")
	span := regexp.MustCompile("`([^`]+)`")
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				out[f] = append(out[f], line)
				continue
			}
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				out[f] = append(out[f], m[1])
			}
		}
	}
	return out
}

// TestDocsCommandsRun keeps the commands the docs name runnable: every
// `make X` is a Makefile target, every `aebench CMD` a command, and every
// `aebench run scenarios/...` parses with its flags and loads its scenario.
func TestDocsCommandsRun(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	makeRe := regexp.MustCompile(`(?:^|[\s;(])make ([a-z][a-z-]*)`)
	aeRe := regexp.MustCompile(`(?:^|[\s;(])(?:go run \./cmd/aebench|(?:\./)?aebench|\$\(AEBENCH\)) ([a-z][a-z-]*)(.*)$`)
	reg := registry.Builtin()
	checked := 0
	for file, lines := range docCommands(t) {
		for _, line := range lines {
			cmd, _, _ := strings.Cut(line, " #")
			for _, m := range makeRe.FindAllStringSubmatch(cmd, -1) {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `:`).Match(mk) {
					t.Errorf("%s: `make %s`: no such Makefile target", file, m[1])
				}
				checked++
			}
			m := aeRe.FindStringSubmatch(cmd)
			if m == nil || strings.HasPrefix(strings.TrimSpace(cmd), "- name:") {
				continue // a CI step's name is not a command
			}
			checked++
			if m[1] != "worker" && !slices.Contains(commandNames, m[1]) {
				t.Errorf("%s: `aebench %s`: no such command", file, m[1])
				continue
			}
			if m[1] != "run" {
				continue
			}
			args := shellWords(m[2])
			if len(args) == 0 || !strings.HasPrefix(args[0], "scenarios/") || strings.ContainsAny(m[2], "<>…") {
				continue // a placeholder (my.yaml, SCENARIO)
			}
			rf, _, done := parseRunFlags(args, io.Discard, io.Discard)
			if done {
				t.Errorf("%s: `aebench run %s`: the flags do not parse", file, m[2])
				continue
			}
			sc, err := scenario.Load(reg, filepath.Join("../..", rf.file), rf.overrides...)
			if err == nil && rf.backends != "" {
				err = sc.SelectBackends(strings.Split(rf.backends, ","))
			}
			if err != nil {
				t.Errorf("%s: `aebench run %s`: %v", file, m[2], err)
			}
		}
	}
	if checked < 10 {
		t.Errorf("found only %d commands in the docs: is the pattern still right?", checked)
	}
}

// shellWords splits a command line as sh would for the docs' commands:
// on blanks, with single- and double-quoted words kept whole.
func shellWords(s string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}
