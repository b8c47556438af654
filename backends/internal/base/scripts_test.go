package base

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestScriptHandles checks every script handle the backends declare
// (NewScript("name") in any Go file under backends/): its body exists, in
// the declaring package's lua/ or in lua/shared/ for base's own, and the
// body opens with a header comment that gives its KEYS, ARGV and Returns,
// as BullMQ's commands/*.lua do. A backend that uses ScriptEnqueue (or is
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

var headerWord = regexp.MustCompile(`\b(KEYS|ARGV|[Rr]eturns?)\b`)

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
	var head strings.Builder
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, "--") {
			break
		}
		head.WriteString(l + "\n")
	}
	seen := map[string]bool{}
	for _, m := range headerWord.FindAllStringSubmatch(head.String(), -1) {
		w := strings.ToLower(m[1])
		if w != "keys" {
			w = strings.TrimSuffix(w, "s") // returns: return
		}
		seen[w] = true
	}
	for _, want := range []string{"KEYS", "ARGV", "Return"} {
		if !seen[strings.ToLower(want)] {
			t.Errorf("%s: the header of lua/%s.lua does not give its %s", from, name, want)
		}
	}
}
