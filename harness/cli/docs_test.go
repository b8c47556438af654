package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
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

// ciJobLines are the shell lines of the CI job marked <!-- ci-job: name -->
// in docs/ci.md: a GitHub step's `run: |` block or a GitLab `script:`
// list, without the lines marked "# ci-test: skip".
func ciJobLines(t *testing.T, doc, name string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "<!-- ci-job: "+name+" -->")
	if !ok {
		t.Fatalf("docs/ci.md has no job %s", name)
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	block, _, _ := strings.Cut(rest, "```")
	var out []string
	inRun := false
	for _, line := range strings.Split(block, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(trim, "# ci-test: skip"):
		case strings.HasPrefix(trim, "run: |"):
			inRun = true
		case inRun && strings.HasPrefix(line, "          "):
			out = append(out, trim)
		case strings.HasPrefix(trim, "- ") && !strings.HasPrefix(trim, "- uses:") && !strings.HasPrefix(trim, "- name:") && !strings.Contains(trim, ":") || strings.HasPrefix(trim, "- go ") || strings.HasPrefix(trim, "- aebench "):
			inRun = false
			out = append(out, strings.TrimPrefix(trim, "- "))
		default:
			inRun = inRun && strings.HasPrefix(line, "          ")
		}
	}
	return out
}

// TestCIJobs runs the shell lines of docs/ci.md's CI jobs as written, on a
// short scenario, in a copy of the module, and checks what they export.
func TestCIJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds aebench and runs two short scenarios")
	}
	data, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	short := writeFile(t, "short.yaml", "duration: 2s\nwarmup: 500ms\ndrain: 5s\ncalibration: off\nbackends: [zset]\nproducers: {rate: 200}\n")
	for _, job := range []struct {
		name  string
		lines int
		files []string
	}{{"github", 4, []string{"smaller.json", "bigger.json"}}, {"gitlab", 3, []string{"bmf.json"}}} {
		t.Run(job.name, func(t *testing.T) {
			lines := ciJobLines(t, string(data), job.name)
			if len(lines) != job.lines || lines[0] != "go install ./cmd/aebench" {
				t.Fatalf("job %s: %d shell lines: %q", job.name, len(lines), lines)
			}
			work, bin := t.TempDir(), t.TempDir()
			script := "set -e\ncd " + root + "\n" + strings.Join(lines, "\n") + "\n"
			script = strings.ReplaceAll(script, "results/cost", filepath.Join(work, "cost"))
			for _, f := range job.files {
				script = strings.ReplaceAll(script, "> "+f, "> "+filepath.Join(work, f))
			}
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(os.Environ(), "SCENARIO="+short, "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("job %s: %v\n%s\n%s", job.name, err, script, out)
			}
			for _, f := range job.files {
				var v any
				raw, err := os.ReadFile(filepath.Join(work, f))
				if err != nil || json.Unmarshal(raw, &v) != nil || len(raw) < 10 {
					t.Errorf("job %s: %s: %v %.100s", job.name, f, err, raw)
				}
			}
		})
	}
}
