// Package cli is the aebench command as a library: cmd/aebench is one call
// to Main, and a team with its own job store builds its own aebench binary
// the same way, with its backend added to the registry it passes in Options
// (see examples/custom-store). `aebench run SCENARIO` runs a scenario file,
// `aebench list` shows the backends and scenarios; see `aebench help`.
//
// Exit codes: 0 every run passed, 1 a run failed its correctness checks
// (lost, unexpected or early jobs), 2 a usage or configuration error, 3 an
// infrastructure error (no Redis, a Redis that stopped answering), 4 a
// threshold crossed or a regression found, 5 with --strict-health a
// verdict that rests on a suspect run (the machine may have set it), 130
// interrupted by Ctrl-C (what was measured is written).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	shipped "github.com/aebench/aebench/scenarios"
	"github.com/aebench/aebench/suggest"

	"golang.org/x/term"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/lab"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/runner"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Exit codes: package verdict holds the one list.
const (
	exitOK          = verdict.ExitOK
	exitFailed      = verdict.ExitCorrectness
	exitUsage       = verdict.ExitUsage
	exitInfra       = verdict.ExitInfra
	exitThreshold   = verdict.ExitThreshold
	exitInterrupted = verdict.ExitInterrupted
)

// Options configure an aebench binary. The zero value is the stock aebench.
type Options struct {
	// Registry is the list of backends the binary offers; nil means
	// registry.Builtin(). Add a store with registry.Builtin().Add(...).
	Registry *registry.Registry
	// Stdout and Stderr default to the process's.
	Stdout, Stderr io.Writer
	// width is the terminal's width when Stdout is one (Main sets it).
	width int
}

func (o Options) withDefaults() Options {
	if o.Registry == nil {
		o.Registry = registry.Builtin()
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	return o
}

// lab is what the lab procedures need of the options.
func (o Options) lab() lab.Options {
	return lab.Options{Registry: o.Registry, Stdout: o.Stdout, Stderr: o.Stderr}
}

// Main runs the aebench command line (args without the program name) and
// returns the process exit code. It is the whole of a main function:
//
//	func main() { os.Exit(cli.Main(os.Args[1:], cli.Options{Registry: reg})) }
//
// It tunes the GC for measurement, serves as a worker process when a run
// started it as one (workers.processes re-executes this same binary, so a
// user's store is available there too), and turns Ctrl-C into an orderly
// stop that writes what was measured.
func Main(args []string, opts Options) int {
	opts = opts.withDefaults()
	tuneGC()
	if runner.IsWorkerProcess() {
		return runner.WorkerMain(opts.Registry, os.Stdin, os.Stdout, os.Stderr)
	}
	tty := false
	if f, ok := opts.Stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			opts.width = w
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		// A second Ctrl-C kills at once.
		stop()
	}()
	return runCtx(ctx, args, opts, tty)
}

// commandNames are the commands runCtx knows.
var commandNames = []string{"run", "plan", "init", "schema", "completion", "trace", "list", "claims", "drivers", "peer-check", "doctor", "compare", "export", "report", "worker", "version", "help"}

func runCtx(ctx context.Context, args []string, opts Options, tty bool) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	if len(args) == 0 {
		fmt.Fprint(stderr, mainHelp)
		return exitUsage
	}
	if h, ok := commandHelp(args[0]); ok && asksHelp(args[1:]) {
		fmt.Fprint(stdout, h) // aebench X --help is aebench help X
		return exitOK
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], opts, tty)
	case "list":
		return cmdList(args[1:], opts)
	case "claims":
		return lab.Claims(ctx, args[1:], opts.lab(), tty)
	case "drivers":
		return lab.Drivers(ctx, args[1:], opts.lab())
	case "peer-check":
		return lab.PeerCheck(ctx, args[1:], opts.lab())
	case "doctor":
		return cmdDoctor(ctx, args[1:], opts)
	case "plan":
		return cmdPlan(ctx, args[1:], opts)
	case "init":
		return cmdInit(args[1:], opts)
	case "completion":
		return cmdCompletion(args[1:], stdout, stderr)
	case "trace":
		return cmdTrace(args[1:], stdout, stderr)
	case "schema":
		data, err := scenario.JSONSchema(opts.Registry)
		if err != nil || len(args) > 1 {
			return usageErr(stderr, "schema", errors.Join(err, errors.New("takes no arguments")))
		}
		fmt.Fprintln(stdout, string(data))
		return exitOK
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, runner.ReadBuild())
		return exitOK
	case "worker":
		return cmdWorker(ctx, args[1:], opts)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			h, ok := commandHelp(args[1])
			if !ok {
				fmt.Fprintf(stderr, "aebench help: unknown command %q%s; commands: %s\n", args[1], suggest.DidYouMean(args[1], commandNames), strings.Join(commandNames, ", "))
				return exitUsage
			}
			fmt.Fprint(stdout, h)
			return exitOK
		}
		fmt.Fprint(stdout, mainHelp)
		return exitOK
	}
	if code, ok := verdictCommand(args[0], args[1:], stdout, stderr); ok {
		return code
	}
	fmt.Fprintf(stderr, "aebench: unknown command %q%s; commands: %s\n", args[0], suggest.DidYouMean(args[0], commandNames), strings.Join(commandNames, ", "))
	return exitUsage
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func cmdRun(ctx context.Context, args []string, opts Options, tty bool) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	rf, code, done := parseRunFlags(args, stdout, stderr)
	if done {
		return code
	}
	reg := opts.Registry
	sc, err := scenario.Load(reg, rf.file, rf.overrides...)
	if err == nil && rf.backends != "" {
		err = sc.SelectBackends(strings.Split(rf.backends, ","))
	}
	if err != nil {
		fmt.Fprintf(stderr, "aebench run: %v\n", err)
		return exitUsage
	}
	finished := make(chan struct{})
	noticeDone := make(chan struct{})
	go func() {
		defer close(noticeDone)
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr, "\naebench: interrupted: stopping producers, draining for up to 3s, writing what was measured (Ctrl-C again to abort)")
		case <-finished:
		}
	}()
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	clog := &rclient.ClientLog{}
	if !rf.quiet {
		clog.Logf = logf
	}
	rclient.RouteGoRedisLog(clog)
	outcome, err := runner.Run(ctx, sc, runner.Options{Registry: reg, Dir: rf.out, Stdout: stdout, TTY: tty, Width: opts.width,
		Quiet: rf.quiet, NoPlots: rf.noPlots, Logf: logf, Outputs: rf.outputs})
	close(finished)
	<-noticeDone
	if !rf.quiet {
		for _, line := range clog.Summary() {
			fmt.Fprintln(stderr, line)
		}
	}
	return runExit(outcome, err, stderr, rf.strictHealth)
}

// runFlags is what `aebench run`'s command line asks for.
type runFlags struct {
	file, backends, out string
	overrides           []scenario.Override
	quiet, noPlots      bool
	outputs             multiFlag
	strictHealth        bool
}

// parseRunFlags reads `aebench run`'s flags, which may come before or
// after the scenario; done means the command ends here with code (help,
// or a usage error already printed).
func parseRunFlags(args []string, stdout, stderr io.Writer) (rf runFlags, code int, done bool) {
	fs := flag.NewFlagSet("aebench run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var sets multiFlag
	fs.Var(&sets, "set", "")
	direct := map[string]*string{}
	for flagName, path := range map[string]string{"duration": "duration", "warmup": "warmup", "drain": "drain",
		"seed": "seed", "repeats": "repeats", "rate": "producers.rate", "client": "client", "redis": "redis.mode",
		"calibration": "calibration"} {
		direct[path] = fs.String(flagName, "", "")
	}
	redisURL := fs.String("redis-url", "", "")
	fs.StringVar(&rf.backends, "backends", "", "")
	fs.StringVar(&rf.out, "out", "", "")
	fs.BoolVar(&rf.noPlots, "no-plots", false, "")
	fs.Var(&rf.outputs, "output", "")
	metricsAddr := fs.String("metrics-addr", "", "")
	fs.BoolVar(&rf.quiet, "quiet", false, "")
	fs.BoolVar(&rf.strictHealth, "strict-health", false, "")
	help := fs.Bool("h", false, "")
	fs.BoolVar(help, "help", false, "")
	var positional []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			fmt.Fprintf(stderr, "aebench run: %v\n(see aebench help run)\n", flagErr(fs, err))
			return rf, exitUsage, true
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *help {
		fmt.Fprint(stdout, runHelp)
		return rf, exitOK, true
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "aebench run: want exactly one SCENARIO file, got %d (%s)\n(see aebench help run)\n",
			len(positional), strings.Join(positional, " "))
		return rf, exitUsage, true
	}
	rf.file = positional[0]
	paths := make([]string, 0, len(direct))
	for p := range direct {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if v := *direct[p]; v != "" {
			rf.overrides = append(rf.overrides, scenario.Override{Path: p, Value: v})
		}
	}
	if *redisURL != "" {
		rf.overrides = append(rf.overrides, scenario.Override{Path: "redis.mode", Value: "url"},
			scenario.Override{Path: "redis.url", Value: *redisURL})
	}
	for _, s := range sets {
		o, err := scenario.ParseOverride(s)
		if err != nil {
			fmt.Fprintf(stderr, "aebench run: %v\n", err)
			return rf, exitUsage, true
		}
		rf.overrides = append(rf.overrides, o)
	}
	if *metricsAddr != "" {
		rf.outputs = append(rf.outputs, "openmetrics="+*metricsAddr)
	}
	if _, err := output.Open(rf.outputs, nil); err != nil {
		fmt.Fprintf(stderr, "aebench run: %v\n", err)
		return rf, exitUsage, true
	}
	return rf, exitOK, false
}

// runExit is a run's exit code, the first that applies of infrastructure,
// correctness, threshold and interrupt (see verdict's exit codes).
func runExit(outcome *runner.Outcome, err error, stderr io.Writer, strictHealth bool) int {
	var ce *scenario.ConfigError
	switch {
	case errors.As(err, &ce), errors.Is(err, runner.ErrDirNotEmpty):
		fmt.Fprintf(stderr, "aebench run: %v\n", err)
		return exitUsage
	case errors.Is(err, redisserver.ErrNoRedis):
		fmt.Fprintf(stderr, "aebench run: no Redis: %v\n", err)
		return exitInfra
	case err != nil:
		fmt.Fprintf(stderr, "aebench run: %v\n", err)
		return exitInfra
	}
	switch {
	case len(outcome.Errored) > 0:
		fmt.Fprintf(stderr, "aebench run: infrastructure error in %s\n", strings.Join(outcome.Errored, ", "))
		return exitInfra
	case len(outcome.Failed) > 0:
		fmt.Fprintf(stderr, "aebench run: FAILED: %s (see summary.json: each run's error, problems and ledger)\n", strings.Join(outcome.Failed, ", "))
		for _, r := range outcome.Summary.Runs {
			if r.Status == "failed" && r.Error != "" {
				fmt.Fprintf(stderr, "  %s: %s\n", r.ID, r.Error)
			}
		}
		return exitFailed
	case strictHealth && len(suspectRuns(outcome)) > 0:
		fmt.Fprintf(stderr, "aebench run: SUSPECT (exit %d, --strict-health): the machine may have set the numbers of %s; retry on a quieter machine\n",
			verdict.ExitSuspect, strings.Join(suspectRuns(outcome), "; "))
		return verdict.ExitSuspect
	case len(outcome.Crossed) > 0:
		fmt.Fprintf(stderr, "aebench run: THRESHOLD crossed (exit %d): %s\n", exitThreshold, strings.Join(outcome.Crossed, "; "))
		if s := suspectRuns(outcome); len(s) > 0 {
			fmt.Fprintf(stderr, "  decided on suspect runs (--strict-health exits %d instead): %s\n", verdict.ExitSuspect, strings.Join(s, "; "))
		}
		return exitThreshold
	case outcome.Interrupted:
		return exitInterrupted
	}
	return exitOK
}

// suspectRuns names the plan's suspect runs with their reasons.
func suspectRuns(outcome *runner.Outcome) []string {
	var out []string
	for _, r := range outcome.Summary.Runs {
		if r.Health.IsSuspect() {
			out = append(out, r.ID+": "+r.Health.Text())
		}
	}
	return out
}

func cmdList(args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("aebench list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "scenarios", "")
	showFields := fs.Bool("fields", false, "")
	help := fs.Bool("h", false, "")
	fs.BoolVar(help, "help", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		fmt.Fprintf(stderr, "aebench list: %v\n(see aebench help list)\n", err)
		return exitUsage
	}
	if *help {
		fmt.Fprint(stdout, listHelp)
		return exitOK
	}
	reg := opts.Registry
	if *showFields {
		for _, f := range scenario.FieldDocs(reg) {
			fmt.Fprintf(stdout, "%-28s default %-10s allowed: %s\n%28s %s\n", f[0], quoteEmpty(f[1]), f[2], "", f[3])
		}
		listFaultKinds(stdout)
		return exitOK
	}
	fmt.Fprintln(stdout, "Backends:")
	for _, b := range reg.All() {
		fmt.Fprintf(stdout, "  %-8s %s\n", b.Name, b.Doc)
		listKind(stdout, b)
		if len(b.Options) == 0 {
			fmt.Fprintf(stdout, "  %-8s options: none\n", "")
		}
		for _, o := range b.Options {
			fmt.Fprintf(stdout, "  %-8s option %s (allowed %s, default %s): %s\n", "", o.Name, o.Allowed, quoteEmpty(o.Default), o.Doc)
		}
	}
	files, _ := filepath.Glob(filepath.Join(*dir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(*dir, "*.yml"))
	files = append(files, more...)
	sort.Strings(files)
	fmt.Fprintf(stdout, "\nScenarios (%s):\n", *dir)
	if len(files) == 0 {
		// Outside the checkout: the scenarios shipped in the binary, which
		// aebench run takes by name (aebench run quick).
		fmt.Fprintf(stdout, "  none in %s; shipped in this binary (aebench run NAME):\n", *dir)
		files = shipped.Names()
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "  %-36s %s\n", f, scenarioBlurb(f))
	}
	return exitOK
}

// listKind prints a backend's kind, declared capabilities and limits.
func listKind(w io.Writer, b registry.Backend) {
	caps := "none declared"
	if cs := registry.CapList(b.Caps); len(cs) > 0 {
		caps = strings.Join(cs, ", ")
	}
	kind := string(b.Kind)
	if b.Caps.Has(jobstore.CapSelfRecovery) {
		kind += ", recovers crashed workers' jobs on its own"
	}
	fmt.Fprintf(w, "  %-8s kind: %s\n  %-8s capabilities: %s\n", "", kind, "", caps)
	if b.Limits != "" {
		fmt.Fprintf(w, "  %-8s limits: %s\n", "", b.Limits)
	}
	if b.Driver != nil {
		lab.PrintDriver(w, *b.Driver)
	}
}

// listFaultKinds prints the fault kinds below the fields: what each does,
// the fields it takes and how its effect shows.
func listFaultKinds(w io.Writer) {
	fmt.Fprintln(w, "\nFaults (each entry of faults: has kind, then at or every [from, until]):")
	for _, d := range faults.Descriptors() {
		fmt.Fprintf(w, "%-28s %s\n", d.Kind, d.Doc)
		if fs := d.Fields(); len(fs) > 0 {
			fmt.Fprintf(w, "%28s fields: %s\n", "", strings.Join(fs, ", "))
		}
		fmt.Fprintf(w, "%28s shows as: %s\n", "", d.Explain)
	}
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// scenarioBlurb is a scenario's description on one line, read without
// checking the rest of the file, so list works on a broken file too.
func scenarioBlurb(path string) string {
	desc, err := scenario.ReadDescription(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	d := strings.Join(strings.Fields(desc), " ")
	if len(d) > 100 {
		d = d[:97] + "..."
	}
	return d
}

// cmdWorker is `aebench worker --coordinator HOST:PORT [--bind IP]`, a
// remote worker of a run with workers.remote. (A worker process of
// workers.processes is started by the run itself, with $AEBENCH_WORKER=1.)
func cmdWorker(ctx context.Context, args []string, opts Options) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(opts.Stderr)
	coord := fs.String("coordinator", "", "HOST:PORT of the run waiting for remote workers (workers.remote; the run prints it)")
	bind := fs.String("bind", "", "local IP address to connect from (a loopback alias stands for a host)")
	fs.Usage = func() { fmt.Fprint(opts.Stderr, workerHelp) }
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *coord == "" || fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	return runner.RemoteWorker(ctx, opts.Registry, *coord, *bind, opts.Stderr)
}
