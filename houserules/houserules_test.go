package houserules

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The brief's size rules.
const (
	maxFileLines = 600
	maxFuncLines = 80
	// maxReadmeLines: issue 43's bound on the README.
	maxReadmeLines = 150
)

// module is the import path every package of the tree starts with.
const module = "github.com/aebench/aebench/"

// source is one Go file: its path from the repository's root and text.
type source struct {
	path string
	text []byte
}

func (s source) test() bool { return strings.HasSuffix(s.path, "_test.go") }

// pkg is the file's package directory ("harness/engine").
func (s source) pkg() string { return path.Dir(s.path) }

// parse parses a Go file whole.
func (s source) parse() (*token.FileSet, *ast.File, error) {
	fs := token.NewFileSet()
	af, err := parser.ParseFile(fs, s.path, s.text, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return fs, af, nil
}

// fileLengths names each non-test file over maxFileLines lines.
func fileLengths(files []source) []string {
	var out []string
	for _, f := range files {
		if n := bytes.Count(f.text, []byte("\n")); !f.test() && n > maxFileLines {
			out = append(out, fmt.Sprintf("%s: %d lines, over %d", f.path, n, maxFileLines))
		}
	}
	return out
}

// funcLengths names each function of a non-test file over maxFuncLines
// lines, from its signature to its closing brace.
func funcLengths(files []source) []string {
	var out []string
	for _, f := range files {
		if f.test() {
			continue
		}
		fs, af, err := f.parse()
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			from, to := fs.Position(fd.Pos()).Line, fs.Position(fd.End()).Line
			if n := to - from + 1; n > maxFuncLines {
				out = append(out, fmt.Sprintf("%s:%d: func %s is %d lines, over %d", f.path, from, fd.Name.Name, n, maxFuncLines))
			}
		}
	}
	return out
}

// layerOf is the layer of package p: the index, top first, of the
// longest prefix in layers that names it; -1 when none does.
func layerOf(layers [][]string, p string) int {
	best, at := -1, -1
	for i, l := range layers {
		for _, prefix := range l {
			if (p == prefix || strings.HasPrefix(p, prefix+"/")) && len(prefix) > best {
				best, at = len(prefix), i
			}
		}
	}
	return at
}

// upwardImports names each import of a non-test file that runs up the
// layers, and each package in no layer.
func upwardImports(files []source, layers [][]string) []string {
	var out []string
	unplaced := map[string]bool{}
	for _, f := range files {
		if f.test() {
			continue
		}
		from := layerOf(layers, f.pkg())
		if from < 0 {
			if !unplaced[f.pkg()] {
				out = append(out, fmt.Sprintf("%s: package %s is in no layer of docs/layers.md", f.path, f.pkg()))
			}
			unplaced[f.pkg()] = true
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f.path, f.text, parser.ImportsOnly)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", f.path, err))
			continue
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			p = strings.TrimPrefix(p, module)
			if to := layerOf(layers, p); to >= 0 && to < from {
				out = append(out, fmt.Sprintf("%s: imports %s, a layer above %s (docs/layers.md)", f.path, p, f.pkg()))
			}
		}
	}
	return out
}

// faultBranches names each == or != with a constant of package faults
// (faults.X) outside faults/.
func faultBranches(files []source) []string {
	var out []string
	for _, f := range files {
		if f.test() || f.pkg() == "faults" {
			continue
		}
		fs, af, err := f.parse()
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		ast.Inspect(af, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if ok && (b.Op == token.EQL || b.Op == token.NEQ) && (isFaultsConst(b.X) || isFaultsConst(b.Y)) {
				out = append(out, fmt.Sprintf("%s:%d: compares with a faults constant: put what depends on the kind or point on its descriptor in faults/",
					f.path, fs.Position(b.Pos()).Line))
			}
			return true
		})
	}
	return out
}

// datedDoc matches what a measurement diary leaves in a package doc: a
// date or a commit hash in parentheses.
var datedDoc = regexp.MustCompile(`\b20[0-9]{2}-[0-9]{2}-[0-9]{2}\b|\([0-9a-f]{7,40}\)|\b[0-9a-f]{7}\b \(`)

// datedPackageDocs names each package doc (the comment above a package
// clause) that carries a date or a commit hash: a package doc says what a
// package holds and why, and dated numbers go to docs/results.md.
func datedPackageDocs(files []source) []string {
	var out []string
	for _, f := range files {
		if f.test() {
			continue
		}
		fs := token.NewFileSet()
		af, err := parser.ParseFile(fs, f.path, f.text, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		if af.Doc == nil {
			continue
		}
		for _, c := range af.Doc.List {
			if m := datedDoc.FindString(c.Text); m != "" {
				out = append(out, fmt.Sprintf("%s:%d: package doc dated (%q): dated numbers go to docs/results.md", f.path, fs.Position(c.Pos()).Line, m))
			}
		}
	}
	return out
}

// unformatted names each Go file gofmt would change.
func unformatted(files []source) []string {
	var out []string
	for _, f := range files {
		if got, err := format.Source(f.text); err != nil || !bytes.Equal(got, f.text) {
			out = append(out, fmt.Sprintf("%s: not gofmt-formatted (gofmt -w %s)", f.path, f.path))
		}
	}
	return out
}

// readmeLength names README.md when it is over maxReadmeLines lines: the
// README is a manual, and measurements live in docs/results.md.
func readmeLength(files []source) []string {
	for _, f := range files {
		if f.path == "README.md" {
			if n := bytes.Count(f.text, []byte("\n")); n > maxReadmeLines {
				return []string{fmt.Sprintf("README.md: %d lines, over %d", n, maxReadmeLines)}
			}
		}
	}
	return nil
}

// brokenTables names each Markdown table row whose cell count differs
// from its header's, and each table without its delimiter row.
func brokenTables(files []source) []string {
	var out []string
	for _, f := range files {
		lines := strings.Split(string(f.text), "\n")
		header, fence := -1, false
		for i, line := range lines {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") {
				fence = !fence
				continue
			}
			if fence || !strings.HasPrefix(t, "|") {
				header = -1
				continue
			}
			n := cells(t)
			switch {
			case header < 0:
				header = n
				if i+1 >= len(lines) || !isDelimiter(strings.TrimSpace(lines[i+1])) {
					out = append(out, fmt.Sprintf("%s:%d: a table without its | --- | row", f.path, i+1))
				}
			case n != header:
				out = append(out, fmt.Sprintf("%s:%d: %d cells where the header has %d", f.path, i+1, n, header))
			}
		}
	}
	return out
}

// cells counts a table row's cells: its unescaped pipes less one, outside
// code spans.
func cells(row string) int {
	n, code := 0, false
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '`':
			code = !code
		case '|':
			if !code {
				n++
			}
		}
	}
	if !strings.HasSuffix(row, "|") {
		n++
	}
	return n - 1
}

func isDelimiter(row string) bool {
	return strings.HasPrefix(row, "|") && strings.Trim(row, "|-: ") == ""
}

func isFaultsConst(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "faults"
}

// readLayers reads the layers from docs/layers.md's marked list.
func readLayers(doc string) ([][]string, error) {
	_, rest, ok := strings.Cut(doc, "<!-- layers -->")
	list, _, ok2 := strings.Cut(rest, "<!-- /layers -->")
	if !ok || !ok2 {
		return nil, fmt.Errorf("no <!-- layers --> ... <!-- /layers --> list")
	}
	var out [][]string
	for _, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		if l, ok := strings.CutPrefix(line, "- "); ok {
			out = append(out, strings.Fields(l))
		}
	}
	return out, nil
}

// tracked reads every file git tracks in this module that matches
// pattern ("*.go"), but examples/, a module of its own.
func tracked(t *testing.T, pattern string) []source {
	t.Helper()
	cmd := exec.Command("git", "ls-files", pattern)
	cmd.Dir = ".."
	outb, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the house rules read the files git tracks)", err)
	}
	var files []source
	for _, p := range strings.Fields(string(outb)) {
		if strings.HasPrefix(p, "examples/") {
			continue
		}
		text, err := os.ReadFile("../" + p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, source{path: p, text: text})
	}
	return files
}

// TestMarkdownTables: no Markdown table of the tree is broken (a row with
// more or fewer cells than its header, a header without its | --- | row).
func TestMarkdownTables(t *testing.T) {
	md := tracked(t, "*.md")
	for _, b := range append(brokenTables(md), readmeLength(md)...) {
		t.Error(b)
	}
}

// TestHouseRules: the tree keeps every rule.
func TestHouseRules(t *testing.T) {
	doc, err := os.ReadFile("../docs/layers.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, err := readLayers(string(doc))
	if err != nil {
		t.Fatalf("docs/layers.md: %v", err)
	}
	files := tracked(t, "*.go")
	var broken []string
	for _, rule := range []func([]source) []string{fileLengths, funcLengths, faultBranches, datedPackageDocs, unformatted,
		func(fs []source) []string { return upwardImports(fs, layers) }} {
		broken = append(broken, rule(files)...)
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Error(b)
	}
}

// TestHouseRulesCatch: each rule fails on a fixture that breaks it, naming
// the place, and passes on one that keeps it.
func TestHouseRulesCatch(t *testing.T) {
	layers := [][]string{{"harness/engine"}, {"jobstore"}}
	long := func(n int) []byte { return []byte("package x\n" + strings.Repeat("// a line\n", n-1)) }
	body := func(n int) []byte {
		return []byte("package x\n\nfunc f() {\n" + strings.Repeat("\t_ = 1\n", n-2) + "}\n")
	}
	cases := []struct {
		name  string
		rule  func([]source) []string
		file  source
		wants string // "" : no violation
	}{
		{"601-line file", fileLengths, source{"harness/engine/x.go", long(601)}, "harness/engine/x.go: 601 lines"},
		{"600-line file", fileLengths, source{"harness/engine/x.go", long(600)}, ""},
		{"601-line test file", fileLengths, source{"harness/engine/x_test.go", long(601)}, ""},
		{"81-line function", funcLengths, source{"jobstore/x.go", body(81)}, "func f is 81 lines"},
		{"80-line function", funcLengths, source{"jobstore/x.go", body(80)}, ""},
		{"upward import", func(fs []source) []string { return upwardImports(fs, layers) },
			source{"jobstore/x.go", []byte("package x\n\nimport _ \"" + module + "harness/engine\"\n")}, "imports harness/engine, a layer above jobstore"},
		{"downward import", func(fs []source) []string { return upwardImports(fs, layers) },
			source{"harness/engine/x.go", []byte("package x\n\nimport _ \"" + module + "jobstore\"\n")}, ""},
		{"package in no layer", func(fs []source) []string { return upwardImports(fs, layers) },
			source{"newpkg/x.go", []byte("package x\n")}, "newpkg is in no layer"},
		{"== faults. outside faults/", faultBranches,
			source{"harness/engine/x.go", []byte("package x\n\nfunc f(k faults.Kind) bool { return k == faults.WorkerKill }\n")}, "harness/engine/x.go:3: compares with a faults constant"},
		{"!= faults. outside faults/", faultBranches,
			source{"harness/engine/x.go", []byte("package x\n\nfunc f(p faults.Point) bool { return faults.Random != p }\n")}, "compares with a faults constant"},
		{"table row with a cell too many", brokenTables, source{"x.md", []byte("| a | b |\n| --- | --- |\n| 1 | 2 | 3 |\n")}, "x.md:3: 3 cells where the header has 2"},
		{"table without its delimiter row", brokenTables, source{"x.md", []byte("| a | b |\n| 1 | 2 |\n")}, "x.md:1: a table without"},
		{"whole table, pipes in code", brokenTables, source{"x.md", []byte("| a | b |\n| --- | --- |\n| `x|y` | 2 |\n\ntext\n")}, ""},
		{"dated package doc", datedPackageDocs, source{"jobstore/x.go", []byte("// Package x holds y (2026-11-27: 4.2 commands a job).\npackage x\n")}, "jobstore/x.go:1: package doc dated"},
		{"commit in a package doc", datedPackageDocs, source{"jobstore/x.go", []byte("// Package x holds y; 99f4bec (early) measured 4.2.\npackage x\n")}, "package doc dated"},
		{"undated package doc", datedPackageDocs, source{"jobstore/x.go", []byte("// Package x holds y, because z.\npackage x\n")}, ""},
		{"unformatted Go", unformatted, source{"jobstore/x.go", []byte("package x\nvar  a = 1\n")}, "not gofmt-formatted"},
		{"formatted Go", unformatted, source{"jobstore/x.go", []byte("package x\n\nvar a = 1\n")}, ""},
		{"151-line README", readmeLength, source{"README.md", long(151)}, "README.md: 151 lines"},
		{"== faults. inside faults/", faultBranches,
			source{"faults/x.go", []byte("package faults\n\nfunc f(k Kind) bool { return k == WorkerKill || faults.A == 1 }\n")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rule([]source{tc.file})
			switch {
			case tc.wants == "" && len(got) > 0:
				t.Errorf("violations %v, want none", got)
			case tc.wants != "" && (len(got) != 1 || !strings.Contains(got[0], tc.wants)):
				t.Errorf("violations %v, want one naming %q", got, tc.wants)
			}
		})
	}
}
