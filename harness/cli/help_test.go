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

// TestUsageExitCodes: each command's documented usage failure exits 2, and
// a Redis that does not answer exits 3 (the helps' exit codes), without
// running anything heavy.
func TestUsageExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run"}, exitUsage},
		{[]string{"run", "--durations", "5s", "quick"}, exitUsage},
		{[]string{"plan", "no-such-scenario"}, exitUsage},
		{[]string{"init", "a", "b"}, exitUsage},
		{[]string{"schema", "extra"}, exitUsage},
		{[]string{"completion", "powershell"}, exitUsage},
		{[]string{"list", "--bogus"}, exitUsage},
		{[]string{"claims", "--flaws", "flaw-nope"}, exitUsage},
		{[]string{"drivers", "--rounds", "x"}, exitUsage},
		{[]string{"peer-check", "--rounds", "x"}, exitUsage},
		{[]string{"doctor"}, exitUsage},
		{[]string{"doctor", "redis://127.0.0.1:1"}, exitInfra},
		{[]string{"compare", "a"}, exitUsage},
		{[]string{"export", "--format", "yaml", "x"}, exitUsage},
		{[]string{"report"}, exitUsage},
		{[]string{"worker"}, exitUsage},
		{[]string{"nonsense"}, exitUsage},
	} {
		if code, _, errOut := cli(t, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errOut)
		}
	}
}
