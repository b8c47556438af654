package base

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestScriptHandles checks every script handle the backends declare
// (NewScript("name") in any Go file under backends/): its body exists, in
// the declaring package's lua/ or in lua/shared/ for base's own, and the
// body opens with one fixed header (checkHeader: its name, then KEYS,
// ARGV, Returns and Complexity), as BullMQ's commands/*.lua do. A backend that uses ScriptEnqueue (or is
// built on Stream, whose Enqueue calls it) must ship lua/enqueue.lua.
func TestScriptHandles(t *testing.T) {
	root := filepath.Join("..", "..")
	handles := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if name, ok := newScriptArg(x); ok {
					handles++
					if name != ScriptEnqueue.Name() || filepath.Base(dir) != "base" {
						checkBody(t, path, dir, name) // base's ScriptEnqueue is each backend's own
					}
				}
			case *ast.SelectorExpr:
				if x.Sel.Name == "ScriptEnqueue" || x.Sel.Name == "NewStream" {
					checkBody(t, path, dir, "enqueue")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if handles < 20 {
		t.Errorf("found %d script handles: is the walk still right?", handles)
	}
}

// newScriptArg returns name for a call NewScript("name") or base.NewScript("name").
func newScriptArg(c *ast.CallExpr) (string, bool) {
	var fn string
	switch f := c.Fun.(type) {
	case *ast.Ident:
		fn = f.Name
	case *ast.SelectorExpr:
		fn = f.Sel.Name
	}
	if fn != "NewScript" || len(c.Args) != 1 {
		return "", false
	}
	lit, ok := c.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	name, err := strconv.Unquote(lit.Value)
	return name, err == nil
}

// headerFields are the fixed lines every body's header gives, in this
// order, after its first line "-- <name>: what it does" (BullMQ's
// commands/*.lua layout).
var headerFields = []string{"KEYS", "ARGV", "Returns", "Complexity"}

func checkBody(t *testing.T, from, dir, name string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(dir, "lua", name+".lua"))
	if err != nil && filepath.Base(dir) == "base" {
		body, err = os.ReadFile(filepath.Join(dir, "lua", "shared", name+".lua"))
	}
	if err != nil {
		t.Errorf("%s: script %q has no body (lua/%s.lua): %v", from, name, name, err)
		return
	}
	if msg := checkHeader(string(body), name); msg != "" {
		t.Errorf("%s: lua/%s.lua: %s", from, name, msg)
	}
}

// checkHeader says what is wrong with a body's header ("" when nothing):
// it opens with "-- <name>:", the handle's name, and gives each of
// headerFields once, in order, each on a line of its own ("-- KEYS: ...").
func checkHeader(body, name string) string {
	lines := strings.Split(body, "\n")
	if !strings.HasPrefix(lines[0], "-- "+name+":") {
		return fmt.Sprintf("the header's first line is %q, want it to open with %q (the handle's name)", lines[0], "-- "+name+":")
	}
	next := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "--") {
			break
		}
		for i, f := range headerFields {
			if !strings.HasPrefix(l, "-- "+f+":") {
				continue
			}
			if i != next {
				return fmt.Sprintf("header field %s out of place: want %s in this order, each once", f, strings.Join(headerFields, ", "))
			}
			next++
		}
	}
	if next < len(headerFields) {
		return fmt.Sprintf("the header does not give its %s (a line \"-- %s: ...\")", headerFields[next], headerFields[next])
	}
	return ""
}

// TestCheckHeader: the header check itself, on good and bad headers.
func TestCheckHeader(t *testing.T) {
	good := "-- claim: a claim.\n--\n-- KEYS: [1] queue.\n-- ARGV: now.\n-- Returns: jobs.\n-- Complexity: O(log N).\nreturn 1"
	for _, tc := range []struct {
		body, name string
		ok         bool
	}{
		{good, "claim", true},
		{good, "enqueue", false}, // not the handle's name
		{strings.Replace(good, "-- ARGV: now.\n", "", 1), "claim", false},
		{strings.Replace(good, "-- Complexity: O(log N).\n", "", 1), "claim", false},
		{"-- claim: x\n-- ARGV: a\n-- KEYS: b\n-- Returns: c\n-- Complexity: d\n", "claim", false}, // order
		{"-- claim: x\n-- KEYS: b\nreturn 1\n-- ARGV: a\n", "claim", false},                        // past the header
	} {
		if got := checkHeader(tc.body, tc.name); (got == "") != tc.ok {
			t.Errorf("checkHeader(%q, %q) = %q, want ok %v", tc.body, tc.name, got, tc.ok)
		}
	}
}
