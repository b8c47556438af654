package runner

import (
	"context"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

func collectEnv(ctx context.Context, dir string) summary.Environment {
	env := summary.Environment{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GitRevision: "unknown",
		Note: "Redis and the load generator share this machine's CPUs: compare backends by ratios within one run, " +
			"and read Redis CPU per job beside jobs/s."}
	if rev, dirty, ok := gitRevision(ctx, dir); ok {
		env.GitRevision, env.GitDirty = rev, dirty
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				env.GitRevision = s.Value
			case "vcs.modified":
				env.GitDirty = s.Value == "true"
			}
		}
	}
	return env
}

func gitRevision(ctx context.Context, dir string) (rev string, dirty, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(strings.TrimSpace(string(st))) > 0, true
}
