package runner

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/harness/summary"
)

// trackedModules are the libraries whose versions shape the numbers: the
// two Redis clients, the histograms and the peer.
var trackedModules = []string{
	"github.com/redis/go-redis/v9",
	"github.com/redis/rueidis",
	"github.com/HdrHistogram/hdrhistogram-go",
	"github.com/hibiken/asynq",
}

func collectEnv(ctx context.Context, dir string) summary.Environment {
	env := summary.Environment{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
		CPUModel: cpuModel(), Kernel: kernelRelease(), GitRevision: "unknown",
		Note: "Redis and the load generator share this machine's CPUs: compare backends by ratios within one run, " +
			"and read Redis CPU per job beside jobs/s."}
	env.Hostname, _ = os.Hostname()
	env.LoadAvgStart = loadAvg()
	env.MemTotalBytes, env.MemAvailableBytes = memInfo()
	b := ReadBuild()
	env.Modules = b.Modules
	// Only the binary's own stamp names the code that ran: the working
	// directory may be another checkout (regress.sh --base-ref runs a base
	// binary built elsewhere from the candidate's directory), so an
	// unstamped binary records "unknown" and says where it ran instead.
	if b.Revision != "" {
		env.GitRevision, env.GitDirty = b.Revision, b.Modified
	} else if rev, _, ok := gitRevision(ctx, dir); ok {
		env.RevisionNote = "binary not stamped (build it with make or scripts/regress.sh); it ran in a checkout at " + rev
	}
	return env
}

// linkedRevision and linkedModified are stamped by the linker
// (-ldflags "-X github.com/aebench/aebench/harness/runner.linkedRevision=REV"):
// go run never stamps VCS information and GOFLAGS=-buildvcs=false turns
// go build's off, so the Makefile and regress.sh stamp the revision this
// way whatever the environment says. Package variables because the linker
// can only set those.
var linkedRevision, linkedModified string

// Build is what the running binary says of itself (runtime/debug build
// info): aebench's module version and VCS revision, and the versions of
// the libraries that shape its numbers.
type Build struct {
	Version, Revision, Time string
	Modified                bool
	GoVersion               string
	Modules                 map[string]string
}

// ReadBuild reads the binary's build info; fields are empty where the
// binary carries none (go run without VCS stamping, tests).
func ReadBuild() Build {
	b := readBuildInfo()
	if b.Revision == "" && linkedRevision != "" {
		b.Revision, b.Modified = linkedRevision, linkedModified == "true"
	}
	return b
}

func readBuildInfo() Build {
	b := Build{GoVersion: runtime.Version(), Modules: map[string]string{}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		for _, m := range trackedModules {
			if d.Path == m {
				v := d.Version
				if d.Replace != nil {
					v += " => " + d.Replace.Path + " " + d.Replace.Version
				}
				b.Modules[shortModule(m)] = v
			}
		}
	}
	return b
}

// String is the line `aebench --version` prints.
func (b Build) String() string {
	v := b.Version
	if v == "" {
		v = "(unknown)"
	}
	s := "aebench " + v
	if b.Revision != "" {
		s += " revision " + b.Revision
		if b.Modified {
			s += " (modified)"
		}
		if b.Time != "" {
			s += " " + b.Time
		}
	} else {
		s += " revision unknown (not stamped: make and scripts/regress.sh stamp it, as does go build in a git checkout)"
	}
	s += ", " + b.GoVersion
	for _, m := range trackedModules {
		if v, ok := b.Modules[shortModule(m)]; ok {
			s += ", " + shortModule(m) + " " + v
		}
	}
	return s
}

// shortModule names a module by its last path element that is not a major
// version suffix: go-redis, rueidis, hdrhistogram-go, asynq.
func shortModule(path string) string {
	parts := strings.Split(path, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && strings.HasPrefix(last, "v") && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	return last
}

// cpuModel is /proc/cpuinfo's first "model name", or "" off Linux.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg is the 1, 5 and 15 minute load averages, or nil.
func loadAvg() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(data))
	var out []float64
	for i := 0; i < 3 && i < len(f); i++ {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// memInfo is MemTotal and MemAvailable in bytes, or zeros.
func memInfo() (total, avail int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "MemTotal":
			total = kb * 1024
		case "MemAvailable":
			avail = kb * 1024
		}
	}
	return total, avail
}

// kernelRelease is the running kernel's release (uname -r), or "".
func kernelRelease() string {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// envLine is the environment in one line, printed before the first run.
func envLine(e summary.Environment) string {
	cpu := e.CPUModel
	if cpu == "" {
		cpu = e.Arch
	}
	s := fmt.Sprintf("environment: %s, %d cores, %s %s, %s", cpu, e.CPUs, e.OS, e.Kernel, e.GoVersion)
	for _, m := range trackedModules[:2] {
		if v, ok := e.Modules[shortModule(m)]; ok {
			s += ", " + shortModule(m) + " " + v
		}
	}
	rev := e.GitRevision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if e.GitDirty {
		rev += " (modified)"
	}
	return s + ", aebench " + rev
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
