// Package driver is the Go side of aebench's driver protocol
// (docs/drivers.md, protocol 1): a job system written in another language
// (BullMQ in Node, Sidekiq in Ruby, RQ in Python) joins a run as processes
// of its own driver, kept in drivers/<system>/ and written in that
// system's language. A client process takes enqueue, inspect and stats
// requests; worker processes run the system's own worker loop and report
// start, completion and failure events, which the harness reads into the
// same ledger as its own workers' (jobstore.ExternalWorkers).
//
// As OpenMessaging Benchmark's driver API, the protocol is small and
// language-neutral: JSON lines on stdin and stdout, the configuration in
// one environment variable, a hello line that declares the driver's
// capabilities and the guarantees it claims under a crash.
package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aebench/aebench/rclient"
)

// Protocol is the driver protocol version this package speaks.
const Protocol = 1

// ConfigEnv holds a driver process's Config as JSON.
const ConfigEnv = "AEBENCH_DRIVER_CONFIG"

// DirEnv overrides where the drivers/ folder is looked for.
const DirEnv = "AEBENCH_DRIVERS"

// ErrNotInstalled: the driver's runtime or its packages are missing; the
// error says how to install them.
var ErrNotInstalled = errors.New("driver not installed")

// Spec says where a driver lives and how it starts.
type Spec struct {
	Name string
	// Command is the runtime and script, run in the driver's folder with
	// the role appended: {"node", "driver.js"}.
	Command []string
	// Needs is a path, relative to the driver's folder, that exists once
	// the system's packages are installed ("" when the runtime's own
	// packages are the system's, as Debian's ruby-sidekiq).
	Needs string
	// Probe is a command that fails when the system's library is missing
	// (run in the driver's folder), for runtimes whose packages live
	// outside it.
	Probe []string
	// Install says how to install the runtime and the system.
	Install string
	// Path, when set, is the driver's folder (aebench drivers check PATH):
	// Dir looks nowhere else.
	Path string
}

// Config is what a driver process is told (ConfigEnv).
type Config struct {
	Protocol    int       `json:"protocol"`
	Role        string    `json:"role"`
	Redis       RedisAddr `json:"redis"`
	Queue       string    `json:"queue"`
	Concurrency int       `json:"concurrency,omitempty"`
	Index       int       `json:"index,omitempty"`
	LeaseMs     int64     `json:"lease_ms,omitempty"`
	BackoffMs   int64     `json:"backoff_ms,omitempty"`
	RetentionMs int64     `json:"retention_ms,omitempty"`
	// PeerMode: "native" runs the system on its own documented defaults
	// for finished jobs instead of keeping them RetentionMs (spec.PeerNative);
	// empty or "contract" keeps them.
	PeerMode string `json:"peer_mode,omitempty"`
	// Options are the driver's own backend options (DeclaredBy's Options,
	// ParseOptions): durations in whole milliseconds under name + "_ms".
	Options map[string]string `json:"options,omitempty"`
	// Jobs and Payload are the plain loop's (role loop); Prefilled: the
	// jobs are already queued (by the client role), the loop only drains.
	Jobs      int    `json:"jobs,omitempty"`
	Payload   string `json:"payload,omitempty"`
	Prefilled bool   `json:"prefilled,omitempty"`
	// IDPrefix names the prefilled jobs (id = prefix + index), so that a
	// loop which reads its jobs back by id (RQ's) finds its own.
	IDPrefix string `json:"id_prefix,omitempty"`
	// EventsAtOnce: the run schedules faults, so a worker writes each
	// event as it happens rather than gathering a millisecond's worth
	// (jobstore.WorkerSpec.Faults).
	EventsAtOnce bool `json:"events_at_once,omitempty"`
	// Queues, with store.queues: the scenario's queues, highest priority
	// first, with their weights, and QueuePolicy, how workers take from
	// them (one of the hello's caps.queues). The driver maps them onto the
	// system's own queues or priorities; each job names its queue (q).
	Queues      []QueueConf `json:"queues,omitempty"`
	QueuePolicy string      `json:"queue_policy,omitempty"`
}

// QueueConf is one of the scenario's queues.
type QueueConf struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// RedisAddr is the Redis a driver connects to: an ACL user (Username
// empty: the default user) and, for a rediss:// Redis, TLS (the files and
// settings of the URL; absent: plain TCP).
type RedisAddr struct {
	Host     string            `json:"host"`
	Port     int               `json:"port"`
	Username string            `json:"username,omitempty"`
	Password string            `json:"password,omitempty"`
	DB       int               `json:"db,omitempty"`
	TLS      *rclient.TLSFiles `json:"tls,omitempty"`
}

// Hello is a driver's first line: who it is and what it declares.
type Hello struct {
	E             string `json:"e"`
	Protocol      int    `json:"protocol"`
	Driver        string `json:"driver"`
	DriverVersion string `json:"driver_version"`
	System        string `json:"system"`
	SystemVersion string `json:"system_version"`
	Runtime       string `json:"runtime"`
	Caps          struct {
		Delayed      bool   `json:"delayed"`
		Retries      string `json:"retries"`
		Recovery     string `json:"recovery"`
		BatchEnqueue bool   `json:"batch_enqueue"`
		Inspect      bool   `json:"inspect"`
		// Queues: the claim policies (store.queue_policy) the system
		// serves natively over several queues; none: one queue only.
		Queues []string `json:"queues,omitempty"`
	} `json:"caps"`
	// Loses lists the fault kinds under which the system, by its own
	// documents, loses the jobs a fault catches in flight.
	Loses      []string `json:"loses"`
	Guarantees string   `json:"guarantees"`
	// HoldsExtra: jobs a worker process may hold beyond its concurrency
	// without having reported them started, which a kill loses (Sidekiq's
	// scheduled poller between ZPOPBYSCORE and its push: 1).
	HoldsExtra int `json:"holds_extra,omitempty"`
	// RemovesFinished: the system deletes a finished job's record in this
	// mode (jobstore.FinishedRemover), in the driver's words; empty: it
	// keeps it at least as long as the run.
	RemovesFinished string `json:"removes_finished,omitempty"`
	// Early: the system may start a delayed job up to MaxMs before its
	// RunAt, by its own code (Why cites it).
	Early struct {
		MaxMs int64  `json:"max_ms"`
		Why   string `json:"why"`
	} `json:"early"`
}

// Dir finds the driver's folder: $AEBENCH_DRIVERS/<name>, else
// drivers/<name> in the working directory or one above it, else beside
// the executable's module.
func (s Spec) Dir() (string, error) {
	if s.Path != "" {
		if !isDir(s.Path) {
			return "", fmt.Errorf("%w: %s: %s is not a folder", ErrNotInstalled, s.Name, s.Path)
		}
		return s.Path, nil
	}
	var tried []string
	if d := os.Getenv(DirEnv); d != "" {
		p := filepath.Join(d, s.Name)
		if isDir(p) {
			return p, nil
		}
		return "", fmt.Errorf("%w: %s: %s=%s has no %s folder", ErrNotInstalled, s.Name, DirEnv, d, s.Name)
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for range 6 {
			p := filepath.Join(dir, "drivers", s.Name)
			tried = append(tried, p)
			if isDir(p) {
				return p, nil
			}
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
		}
	}
	return "", fmt.Errorf("%w: %s: no drivers/%s folder found (looked in %s; set %s to the repository's drivers folder)",
		ErrNotInstalled, s.Name, s.Name, strings.Join(tried, ", "), DirEnv)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Cmd builds the command of one role with cfg in its environment; a
// missing runtime or package is ErrNotInstalled with s.Install.
func (s Spec) Cmd(ctx context.Context, cfg Config) (*exec.Cmd, error) {
	dir, err := s.Dir()
	if err != nil {
		return nil, err
	}
	bin := s.Command[0]
	if strings.Contains(bin, "/") && !filepath.IsAbs(bin) {
		bin = filepath.Join(dir, bin) // a runtime inside the driver's folder: its virtual environment
	}
	if _, err := exec.LookPath(bin); err != nil {
		return nil, fmt.Errorf("%w: %s: %s is not on PATH; install: %s", ErrNotInstalled, s.Name, bin, s.Install)
	}
	if s.Needs != "" {
		if _, err := os.Stat(filepath.Join(dir, s.Needs)); err != nil {
			return nil, fmt.Errorf("%w: %s: %s missing; install: %s", ErrNotInstalled, s.Name, filepath.Join(dir, s.Needs), s.Install)
		}
	}
	cfg.Protocol = Protocol
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), s.Command[1:]...), cfg.Role)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), ConfigEnv+"="+string(data))
	return cmd, nil
}

// ProbeHello runs the driver's hello role: what it declares, or why it
// cannot run here (ErrNotInstalled with the way to install it).
func ProbeHello(ctx context.Context, s Spec) (Hello, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if len(s.Probe) > 0 {
		if _, err := exec.LookPath(s.Probe[0]); err != nil {
			return Hello{}, fmt.Errorf("%w: %s: %s is not on PATH; install: %s", ErrNotInstalled, s.Name, s.Probe[0], s.Install)
		}
		p := exec.CommandContext(ctx, s.Probe[0], s.Probe[1:]...)
		if out, err := p.CombinedOutput(); err != nil {
			return Hello{}, fmt.Errorf("%w: %s: %s: %s; install: %s", ErrNotInstalled, s.Name, strings.Join(s.Probe, " "), lastLine(string(out)), s.Install)
		}
	}
	cmd, err := s.Cmd(ctx, Config{Role: "hello"})
	if err != nil {
		return Hello{}, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Hello{}, fmt.Errorf("driver %s: hello: %w: %s", s.Name, err, lastLine(stderr.String()))
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return parseHello(s.Name, []byte(line))
}

func parseHello(name string, line []byte) (Hello, error) {
	var h Hello
	if err := json.Unmarshal(line, &h); err != nil || h.E != "hello" {
		return Hello{}, fmt.Errorf("driver %s: first line %q is not a hello (docs/drivers.md)", name, line)
	}
	if h.Protocol != Protocol {
		return Hello{}, fmt.Errorf("driver %s speaks protocol %d; this aebench speaks %d", name, h.Protocol, Protocol)
	}
	return h, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// readHello reads a starting process's lines up to its ready: the hello
// first, then "ready"; another event is an error.
func readHello(name string, sc *bufio.Scanner) (Hello, error) {
	if !sc.Scan() {
		return Hello{}, fmt.Errorf("driver %s ended before its hello: %v", name, sc.Err())
	}
	h, err := parseHello(name, sc.Bytes())
	if err != nil {
		return Hello{}, err
	}
	if !sc.Scan() {
		return Hello{}, fmt.Errorf("driver %s ended before it was ready: %v", name, sc.Err())
	}
	var ev struct {
		E string `json:"e"`
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.E != "ready" {
		return Hello{}, fmt.Errorf("driver %s: %q where \"ready\" was due", name, sc.Text())
	}
	return h, nil
}

// Missing says why a test may skip spec: the ErrNotInstalled text when its
// runtime or packages are missing and the CI environment variable is
// unset; "" when it is installed. Under CI (.ci/run installs every
// driver) a missing driver, like any other probe failure, is err.
func Missing(ctx context.Context, spec Spec) (why string, err error) {
	_, err = ProbeHello(ctx, spec)
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "" {
		return err.Error(), nil
	}
	return "", err
}
