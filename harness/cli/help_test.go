package cli

import (
	"strings"
	"testing"
)

// TestHelpEveryCommand: for every command, aebench help X and aebench X
// --help (and -h) print the same help on stdout and exit 0.
func TestHelpEveryCommand(t *testing.T) {
	for _, name := range commandNames {
		t.Run(name, func(t *testing.T) {
			code, want, errOut := cli(t, "help", name)
			if code != exitOK || want == "" || errOut != "" {
				t.Fatalf("help %s: exit %d, stdout %d bytes, stderr %q", name, code, len(want), errOut)
			}
			for _, flag := range []string{"--help", "-h"} {
				code, got, errOut := cli(t, name, flag)
				if code != exitOK || got != want || errOut != "" {
					t.Errorf("%s %s: exit %d, stderr %q, same help as `help %s`: %v", name, flag, code, errOut, name, got == want)
				}
			}
		})
	}
	code, out, _ := cli(t, "help")
	for _, name := range commandNames {
		if code != exitOK || !strings.Contains(out, "aebench "+name) {
			t.Errorf("top-level help does not list %s", name)
		}
	}
}

// TestUnknownCommandSuggests: a near miss gets a "did you mean".
func TestUnknownCommandSuggests(t *testing.T) {
	for _, args := range [][]string{{"compar"}, {"help", "clams"}} {
		code, _, errOut := cli(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "did you mean") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}
