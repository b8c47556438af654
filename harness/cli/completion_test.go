package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionBash loads the bash completion in bash and completes a
// command and a flag; every command has its flags listed.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	code, script, _ := cli(t, "completion", "bash")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	path := filepath.Join(t.TempDir(), "aebench.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ words, cword, want string }{
		{"aebench ru", "1", "run"},
		{"aebench compare --stri", "2", "--strict-health"},
		{"aebench run --dur", "2", "--duration"},
	} {
		out, err := exec.Command("bash", "-c", "source "+path+"; COMP_WORDS=("+tc.words+"); COMP_CWORD="+tc.cword+"; _aebench; echo \"${COMPREPLY[@]}\"").CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: %q %v, want %s", tc.words, out, err, tc.want)
		}
	}
	for _, c := range commandNames {
		if _, ok := commandFlags[c]; !ok && !strings.Contains("doctor schema version help", c) {
			t.Errorf("command %s has no flags listed for completion", c)
		}
	}
}
