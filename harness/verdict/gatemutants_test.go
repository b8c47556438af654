package verdict

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateMutants holds mutants/gate/*.patch (make gate-mutants) to this
// tree: each applies, names its strategies, and expects a gated metric of
// the catalog, so a patch that rotted or a metric renamed fails make test,
// not a later make gate-mutants.
func TestGateMutants(t *testing.T) {
	root := filepath.Join("..", "..")
	patches, _ := filepath.Glob(filepath.Join(root, "mutants", "gate", "*.patch"))
	if len(patches) == 0 {
		t.Fatal("no mutants/gate/*.patch")
	}
	strategies := map[string]bool{"zset": true, "stream": true, "bucket": true, "dual": true}
	for _, p := range patches {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		head := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "diff --git") {
				break
			}
			if k, v, ok := strings.Cut(l, ":"); ok {
				head[k] = strings.TrimSpace(v)
			}
		}
		name := strings.TrimSuffix(filepath.Base(p), ".patch")
		if head["Mutant"] != name {
			t.Errorf("%s: Mutant %q, want %q", p, head["Mutant"], name)
		}
		for _, be := range strings.Fields(head["Backends"]) {
			if !strategies[be] {
				t.Errorf("%s: Backends names %q, not a strategy", p, be)
			}
		}
		if m, err := Lookup(head["Expect"]); err != nil || !m.Gate {
			t.Errorf("%s: Expect %q is not a gated metric (%v)", p, head["Expect"], err)
		}
		if _, err := exec.LookPath("git"); err != nil {
			continue
		}
		cmd := exec.Command("git", "apply", "--check", filepath.Join("mutants", "gate", name+".patch"))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s no longer applies: %v: %s", p, err, out)
		}
	}
}
