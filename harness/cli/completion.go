package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

const completionHelp = `Usage: aebench completion bash|zsh|fish

Prints a shell completion script for aebench's commands and their flags:
  source <(aebench completion bash)          # bash, e.g. in ~/.bashrc
  source <(aebench completion zsh)           # zsh (bash completion emulation)
  aebench completion fish | source           # fish
Scenario files complete as files.

Exit codes: 0 printed, 2 a usage error.
`

// runFlagNames are aebench run's flags, which plan takes too.
var runFlagNames = []string{"--set", "--duration", "--warmup", "--drain", "--seed", "--repeats", "--rate", "--client", "--redis",
	"--redis-url", "--backends", "--calibration", "--out", "--no-plots", "--output", "--metrics-addr", "--quiet", "--strict-health", "--help"}

// commandFlags are each command's flags, for completion.
var commandFlags = map[string][]string{
	"run": runFlagNames, "plan": runFlagNames,
	"init":       {"--redis-url", "--backends", "--help"},
	"list":       {"--dir", "--fields", "--help"},
	"claims":     {"--quick", "--claims", "--flaws", "--dir", "--out", "--readme", "--help"},
	"drivers":    {"--overhead", "--jobs", "--concurrency", "--rounds", "--help"},
	"peer-check": {"--rounds", "--count", "--help"},
	"compare":    {"--fail-on", "--noise-floor", "--alpha", "--format", "--force", "--backends", "--metrics", "--strict-health", "--loosen", "--help"},
	"export":     {"--format", "--better", "--help"},
	"report":     {"--out", "--help"},
	"worker":     {"--coordinator", "--bind", "--help"},
	"completion": {"bash", "zsh", "fish"},
	"trace":      {"synth", "check", "--out", "--duration", "--rate", "--period", "--swing", "--bursts", "--burst-x", "--burst-len", "--delayed", "--max-delay", "--payload", "--seed", "--help"},
}

func cmdCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageErr(stderr, "completion", fmt.Errorf("want one shell: bash, zsh or fish"))
	}
	switch args[0] {
	case "bash", "zsh":
		fmt.Fprint(stdout, bashCompletion(args[0] == "zsh"))
	case "fish":
		fmt.Fprint(stdout, fishCompletion())
	default:
		return usageErr(stderr, "completion", fmt.Errorf("%q: allowed: bash, zsh, fish", args[0]))
	}
	return exitOK
}

func sortedCommands() []string {
	names := append([]string(nil), commandNames...)
	sort.Strings(names)
	return names
}

func bashCompletion(zsh bool) string {
	var b strings.Builder
	if zsh {
		b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
	}
	b.WriteString("_aebench() {\n  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n")
	fmt.Fprintf(&b, "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(sortedCommands(), " "))
	b.WriteString("  case \"$cmd\" in\n")
	for _, c := range sortedCommands() {
		if fl, ok := commandFlags[c]; ok {
			fmt.Fprintf(&b, "    %s) if [[ \"$cur\" == -* || \"$cmd\" == completion ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi ;;\n",
				c, strings.Join(fl, " "))
		}
	}
	b.WriteString("    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n  esac\n}\ncomplete -F _aebench aebench\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	for _, c := range sortedCommands() {
		fmt.Fprintf(&b, "complete -c aebench -n __fish_use_subcommand -a %s\n", c)
		for _, f := range commandFlags[c] {
			if strings.HasPrefix(f, "--") {
				fmt.Fprintf(&b, "complete -c aebench -n '__fish_seen_subcommand_from %s' -l %s\n", c, strings.TrimPrefix(f, "--"))
			} else {
				fmt.Fprintf(&b, "complete -c aebench -n '__fish_seen_subcommand_from %s' -a %s\n", c, f)
			}
		}
	}
	return b.String()
}
