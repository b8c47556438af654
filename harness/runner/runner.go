package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/output"
	"github.com/aebench/aebench/harness/scenario"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/harness/verdict"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Options configure Run, in go-redis's style: the zero value of each field
// means its documented default.
type Options struct {
	// OutDir is where the run's folder <UTC time>-<scenario> is created
	// when Dir is empty; default "results".
	OutDir string
	// Dir, when set, is the results directory itself (aebench run --out):
	// created if missing, refused (ErrDirNotEmpty) if it holds anything.
	Dir string
	// Stdout receives the status lines, per-run verdicts and the comparison
	// table; default io.Discard.
	Stdout io.Writer
	// TTY says Stdout is a terminal: the status line is redrawn in place
	// instead of printed as one plain line per second.
	TTY bool
	// Width is the terminal's width in columns (0: unknown): the status
	// line never runs past it, so a redraw never wraps.
	Width int
	// Quiet: Stdout gets only the final tables, the thresholds and the
	// results line (no environment line, run headers, status or per-run
	// verdicts); warnings go to Logf.
	Quiet bool
	// Logf receives progress messages (Redis started, where files went).
	Logf func(format string, args ...any)
	// NoPlots skips the PNG/SVG plots (tests).
	NoPlots bool
	// GitDir is where the git revision is read; default ".".
	GitDir string
	// Registry lists the backends a scenario may name; nil: the built-in
	// ones (registry.Builtin).
	Registry *registry.Registry
	// Outputs names the optional output formats to turn on (package
	// output: NAME or NAME=PARAM); the always-on ones run regardless.
	Outputs []string
}

// Outcome is what Run did.
type Outcome struct {
	Dir     string
	Summary *summary.Summary
	Failed  []string // runs that failed their correctness checks
	Errored []string // runs that hit an infrastructure error
	// Crossed are the scenario's thresholds that failed, a line each
	// (crossed, or unchecked: no job store measured the metric).
	Crossed     []string
	Interrupted bool
}

// Run runs every run of s and writes results/<UTC time>-<name>/. Each run's
// files and summary.json are written as soon as the run ends, so a failure
// or Ctrl-C later never loses what was measured. It returns a *ConfigError
// for a bad backend option, an error wrapping redisserver.ErrNoRedis when no
// Redis can be had, and other errors for other infrastructure failures; a
// run that fails its correctness checks is not an error (see Outcome.Failed).
func Run(ctx context.Context, s *scenario.Scenario, o Options) (*Outcome, error) {
	o = o.withDefaults()
	ths, err := parseThresholds(s)
	if err != nil {
		return nil, err
	}
	progress := o.Stdout
	if o.Quiet {
		progress = io.Discard
	}
	for _, w := range s.Warnings {
		if o.Quiet {
			o.Logf("warning: %s", w)
			continue
		}
		fmt.Fprintln(o.Stdout, "warning: "+w)
	}
	var off []string
	if o.NoPlots {
		off = append(off, "plots")
	}
	// The outputs are built before the results directory, so a bad
	// --output leaves no empty directory behind.
	outs, err := output.Open(o.Outputs, off)
	if err != nil {
		return nil, &scenario.ConfigError{File: "command line", Field: "--output", Msg: err.Error()}
	}
	started := time.Now()
	dir, err := makeResultsDir(o, started, s.Name)
	if err != nil {
		return nil, err
	}
	// Whatever happens, the last line names the results directory.
	defer fmt.Fprintf(o.Stdout, "results: %s\n", dir)
	sum := newSummary(s, collectEnv(ctx, o.GitDir), started)
	fmt.Fprintln(progress, envLine(sum.Environment))
	out := &Outcome{Dir: dir, Summary: sum}
	pr := &planRunner{s: s, o: o, dir: dir, sum: sum, ths: ths, pool: newRedisPool(o.Logf), progress: progress,
		status: &statusPrinter{w: progress, tty: o.TTY, width: o.Width}}
	defer pr.pool.close()
	defer func() {
		if pr.unpin != nil {
			pr.unpin()
		}
	}()
	pr.outputs = outs
	defer pr.closeOutputs()
	for _, op := range outs {
		if err := op.Start(output.Plan{Dir: dir, Scenario: s, Stdout: o.Stdout, Progress: progress, Registry: o.Registry}); err != nil {
			return out, err
		}
	}
	if err := pr.checkpoint(); err != nil {
		return out, err
	}
	runs := s.Runs()
	if err := pr.prepare(ctx, runs); err != nil {
		sum.FinishedAt, sum.Error = time.Now().UTC(), err.Error()
		_ = pr.checkpoint()
		for _, op := range pr.outputs {
			_ = op.PlanDone(sum) // the page says what stopped the plan
		}
		return out, err
	}
	runErr := pr.runAll(ctx, runs, out)
	return out, pr.conclude(out, runErr)
}

func (o Options) withDefaults() Options {
	if o.OutDir == "" {
		o.OutDir = "results"
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.GitDir == "" {
		o.GitDir = "."
	}
	if o.Registry == nil {
		o.Registry = registry.Builtin()
	}
	return o
}

// prepare starts every Redis the plan needs before the first run, so a
// missing server fails in a second, not after the calibration run, and
// checks every backend's options.
func (pr *planRunner) prepare(ctx context.Context, runs []conditions.RunSpec) error {
	if err := pr.pinHarness(runs); err != nil {
		return err
	}
	checked := map[*pooledRedis]bool{}
	for _, spec := range runs {
		if be, err := pr.o.Registry.Lookup(spec.Config.Backend.Name); err == nil && be.Kind != registry.KindCalibration {
			srv, err := pr.pool.get(ctx, spec.Config.Redis)
			if err != nil {
				return err
			}
			if !srv.info.Owned && !checked[srv] {
				// A server given by URL may be a managed one: say what it
				// refuses now, not after the first run fails on it.
				checked[srv] = true
				if rep := redisserver.Doctor(ctx, srv.r); !rep.Runnable() {
					return fmt.Errorf("the Redis at %s cannot run aebench (see aebench doctor URL): %s", srv.r.Addrs[0], strings.Join(rep.Problems(), "; "))
				}
			}
		}
	}
	return pr.checkOptions(ctx, runs)
}

// pinHarness moves the harness off the CPUs the plan gives Redis
// (redis.cpus, the same in every run), before any server or worker
// process starts, and says where each runs.
func (pr *planRunner) pinHarness(runs []conditions.RunSpec) error {
	cpus := ""
	for _, spec := range runs {
		if rc := spec.Config.Redis; rc.CPUs != "" && (rc.Mode == "embedded" || rc.Mode == "cluster") {
			cpus = rc.CPUs
		}
	}
	if cpus == "" {
		return nil
	}
	mine, restore, err := pinHarness(cpus)
	var none errNoHarnessCPU
	if errors.As(err, &none) {
		return &scenario.ConfigError{File: pr.s.File, Field: "redis.cpus", Msg: none.Error() + "; allowed: CPUs that leave the harness at least one of " + none.mine}
	}
	if err != nil {
		return err
	}
	pr.unpin = restore
	pr.sum.Environment.HarnessCPUs = mine
	fmt.Fprintf(pr.progress, "cpus: redis-server on %s, the harness on %s (redis.cpus)\n", cpus, mine)
	return nil
}

// runAll runs the plan's runs in order, writing summary.json after each;
// it stops at Ctrl-C or at an infrastructure error, which it returns.
func (pr *planRunner) runAll(ctx context.Context, runs []conditions.RunSpec, out *Outcome) error {
	for i, spec := range runs {
		if ctx.Err() != nil {
			out.Interrupted = true
			return nil
		}
		cond := spec.Config.Conditions("")
		if spec.Calibration {
			cond += " (in process: no Redis, no client)"
		}
		fmt.Fprintf(pr.progress, "run %d/%d %s: %s, %s\n", i+1, len(runs), spec.ID, backendTitle(spec), cond)
		pr.status.pos, pr.status.runs = i+1, len(runs)
		pr.status.run, pr.status.after = plannedLength(runs[i]), 0
		for _, r := range runs[i+1:] {
			pr.status.after += plannedLength(r)
		}
		spec, err := pr.resolveCapacity(ctx, spec)
		var rs *summary.RunSummary
		if err == nil {
			rs, err = pr.runOne(ctx, spec)
		} else if ctx.Err() == nil {
			// A failed probe is its run's error; the plan goes on.
			rs = &summary.RunSummary{ID: spec.ID, Label: spec.Config.Backend.Label, Backend: spec.Config.Backend.Name, Cell: spec.Cell,
				Repeat: spec.Repeat, Config: spec.Config, Conditions: spec.Config.Conditions(""), Status: summary.StatusError, Error: err.Error()}
			fmt.Fprintf(pr.progress, "  => %s: ERROR (%s)\n", spec.Config.Backend.Label, err)
			err = nil
		} else {
			out.Interrupted = true
			return nil
		}
		if rs != nil {
			pr.record(rs, out)
		}
		if werr := pr.checkpoint(); werr != nil && err == nil {
			err = werr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// plannedLength is how long a run is planned to measure: warm-up plus
// duration (real time; its drain is not known in advance).
func plannedLength(r conditions.RunSpec) time.Duration {
	c := r.Config.RealTime()
	return c.Warmup + c.Duration
}

// record adds a finished run to the summary and the outcome, and prints
// its verdict line.
func (pr *planRunner) record(rs *summary.RunSummary, out *Outcome) {
	pr.sum.Runs = append(pr.sum.Runs, *rs)
	switch rs.Status {
	case summary.StatusFailed:
		out.Failed = append(out.Failed, rs.ID)
	case summary.StatusError:
		out.Errored = append(out.Errored, rs.ID)
	case summary.StatusInterrupted:
		out.Interrupted = true
	}
	for _, op := range pr.outputs {
		if rr, ok := op.(output.RunRecorder); ok {
			rr.RunRecorded(rs)
		}
	}
}

// conclude finishes the summary (package analysis), hands it to every
// output (plots, summary.json, the page, the terminal's tables, in that
// order) and writes the complete flag when every planned run ran; it
// returns the first error.
func (pr *planRunner) conclude(out *Outcome, runErr error) error {
	sum, o := pr.sum, pr.o
	sum.FinishedAt = time.Now().UTC()
	sum.Environment.LoadAvgEnd = loadAvg()
	sum.Complete = runErr == nil && !out.Interrupted
	sum.Interrupted = out.Interrupted
	if err := pr.finalize(); err != nil && runErr == nil {
		runErr = err
	}
	out.Crossed = pr.crossed
	final := runErr == nil && sum.Complete && len(out.Errored) == 0
	if why := planError(runErr, sum); why != "" {
		sum.Error = why
	}
	sum.Complete = sum.Complete && runErr == nil // what the outputs (the page) state
	for _, op := range pr.outputs {
		if err := op.PlanDone(sum); err != nil && runErr == nil {
			runErr, final = err, false
		}
	}
	if sum.PlotError != "" {
		o.Logf("plots: %s", sum.PlotError)
	}
	fmt.Fprint(o.Stdout, "\nfiles: summary.json, report.html, timeseries.csv, *.hlog, *.hgrm")
	if !o.NoPlots {
		fmt.Fprint(o.Stdout, ", plots *.png and *.svg")
	}
	if final {
		runErr = writeCompleteFlag(pr.dir, sum)
		fmt.Fprint(o.Stdout, ", "+verdict.CompleteFlag)
	}
	fmt.Fprintln(o.Stdout)
	return runErr
}

// planError is summary.json's error: what stopped the plan, else the runs
// that errored or failed and why ("" when every run passed).
func planError(runErr error, sum *summary.Summary) string {
	if runErr != nil {
		return runErr.Error()
	}
	var bad []string
	for _, r := range sum.Runs {
		switch {
		case r.Status == summary.StatusError, r.Status == summary.StatusFailed && r.Error != "":
			bad = append(bad, r.ID+" "+r.Status+": "+r.Error)
		case r.Status == summary.StatusFailed:
			bad = append(bad, fmt.Sprintf("%s failed its correctness checks (lost %d, unexpected %d, early %d; problems: %s)",
				r.ID, r.Ledger.Lost, r.Ledger.Unexpected, r.Ledger.StartedEarly, strings.Join(r.Problems, "; ")))
		}
	}
	return strings.Join(bad, "; ")
}

func backendTitle(spec conditions.RunSpec) string {
	if spec.Calibration {
		return "null backend (calibration, not a job store)"
	}
	if spec.Config.Backend.Label != spec.Config.Backend.Name {
		return spec.Config.Backend.Label + " (" + spec.Config.Backend.Name + ")"
	}
	return spec.Config.Backend.Name
}

// planRunner carries the state of one Run.
type planRunner struct {
	s   *scenario.Scenario
	ths []verdict.Threshold
	// progress receives the run headers and verdict lines (io.Discard
	// with Quiet).
	progress io.Writer
	// crossed: the thresholds that failed, set by finalize.
	crossed []string
	o       Options
	dir     string
	sum     *summary.Summary
	pool    *redisPool
	// unpin gives the harness back the CPUs it had before redis.cpus.
	unpin  func()
	status *statusPrinter
	// outputs get every sample, run and the plan (package output).
	outputs []output.Output
	// runAddr is where the current run's clients reach Redis when it is
	// not the server's own address (network.rtt's proxy); "": direct.
	runAddr string
	// capacity: the probes' results (producers.capacity: measure).
	capacity map[capacityKey]conditions.Config
	// paths: the current run's Redis under callgrind, which the path probe
	// reuses after the run; nil when the run is not metered.
	paths *pathTarget
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// runOne prepares the store, runs the engine and writes the run's files.
// The error is for what stops the whole plan (configuration, infrastructure).
func (pr *planRunner) runOne(ctx context.Context, spec conditions.RunSpec) (*summary.RunSummary, error) {
	cfg := spec.Config
	rs := &summary.RunSummary{ID: spec.ID, Label: cfg.Backend.Label, Backend: cfg.Backend.Name, Cell: spec.Cell,
		Repeat: spec.Repeat, Calibration: spec.Calibration, Client: cfg.Client, Config: cfg,
		Conditions: cfg.Conditions("")}
	if cfg.Simulated() {
		rs.ResolutionNs = int64(cfg.Resolution())
	}
	fail := func(status string, err error) (*summary.RunSummary, error) {
		rs.Status, rs.Error = status, err.Error()
		return rs, err
	}
	be, err := pr.o.Registry.Lookup(cfg.Backend.Name)
	if err != nil {
		return fail(summary.StatusError, &scenario.ConfigError{File: pr.s.File, Field: "backends", Msg: err.Error()})
	}
	client, cost, closeProxy, err := pr.connect(ctx, be, rs)
	if err != nil {
		return fail(summary.StatusError, err)
	}
	defer closeProxy()
	if client != nil {
		defer client.Close()
	}
	store, jopts, err := pr.buildStore(ctx, spec, be, client, rs)
	if err != nil || store == nil {
		if err != nil {
			return fail(summary.StatusError, err)
		}
		return rs, nil // not applicable
	}
	defer store.Close()
	return pr.execute(ctx, spec, be, store, jopts, cost, rs)
}

// buildStore builds the run's store (sharded, and wrapped for simulated
// time) and describes it in rs; a nil store without an error means the run
// does not apply (rs says why).
func (pr *planRunner) buildStore(ctx context.Context, spec conditions.RunSpec, be registry.Backend, client rclient.Client,
	rs *summary.RunSummary) (jobstore.Store, jobstore.Options, error) {
	cfg := spec.Config
	jopts := runStoreOptions(cfg, "aeb-"+spec.ID+"-"+randHex(3))
	if cfg.Store.Shards > 1 && !be.Shardable() {
		rs.Status, rs.NotApplicable = summary.StatusNotApplicable, fmt.Sprintf("store.shards %d: a %s cannot be sharded", cfg.Store.Shards, be.Kind)
		return nil, jopts, nil
	}
	if len(cfg.Store.Queues) > 0 && len(be.NativeQueues) > 0 && !slices.Contains(be.NativeQueues, cfg.Store.QueuePolicy) {
		rs.Status, rs.NotApplicable = summary.StatusNotApplicable, fmt.Sprintf("store.queue_policy %s: %s serves its queues %s only", cfg.Store.QueuePolicy, be.Name, strings.Join(be.NativeQueues, " or "))
		return nil, jopts, nil
	}
	store, err := newStore(ctx, be, client, cfg, jopts)
	if err != nil {
		if errors.Is(err, jobstore.ErrInvalid) {
			return nil, jopts, &scenario.ConfigError{File: pr.s.File, Line: cfg.Backend.Line, Column: cfg.Backend.Col,
				Field: "backends (" + cfg.Backend.Label + ") options", Msg: err.Error()}
		}
		return nil, jopts, fmt.Errorf("%s: build store: %w", spec.ID, err)
	}
	rs.Capabilities = registry.CapList(store.Capabilities())
	if store.Capabilities().Has(jobstore.CapSeedVariant) {
		rs.Label += " (seed variant)"
	}
	rs.Kind = string(be.Kind)
	if be.Kind == registry.KindPeer {
		rs.PeerMode = registry.PeerModeOf(cfg.Backend.Options)
	}
	rs.CountNoise, rs.CountNoiseWhy = be.CountNoise, be.CountNoiseWhy
	if be.Kind != registry.KindJobStore {
		rs.Limits = be.Limits
	}
	if ld, ok := store.(jobstore.LossDeclarer); ok {
		_, why := ld.DeclaredLoss()
		rs.Limits += "; its driver declares " + why
	}
	if why := notApplicable(be, store.Capabilities(), cfg); why != "" && !spec.Calibration {
		rs.Status, rs.NotApplicable = summary.StatusNotApplicable, why
		store.Close()
		return nil, jopts, nil
	}
	// A loop only where the store says due jobs wait for one: in claim mode
	// it would add Redis work the strategy does not need and skew its cost.
	_, isMover := store.(jobstore.Mover)
	rs.MoverLoop = isMover && store.Capabilities().Has(jobstore.CapMoverLoop)
	return store, jopts, nil
}

// execute runs the engine on store and hands the result to the outputs.
func (pr *planRunner) execute(ctx context.Context, spec conditions.RunSpec, be registry.Backend, store jobstore.Store,
	jopts jobstore.Options, cost engine.CostMeter, rs *summary.RunSummary) (*summary.RunSummary, error) {
	cfg := spec.Config
	espec := spec
	espec.Config = cfg.RealTime()
	fail := func(err error) (*summary.RunSummary, error) {
		rs.Status, rs.Error = summary.StatusError, err.Error()
		return rs, err
	}
	run := output.RunOf(rs)
	hw, err := pr.histogramLog(run, rs.Conditions)
	if err != nil {
		return fail(err)
	}
	hooks := engine.Hooks{Label: cfg.Backend.Label, HLog: hw, Status: pr.status.line, Sample: pr.sample(run), SampleHists: output.UseHistograms(pr.outputs), Cost: cost,
		CostWholeRun: cfg.Redis.Metered(), Mover: rs.MoverLoop,
		NoRecoverer: !store.Capabilities().Has(jobstore.CapLeaseRecovery) && !store.Capabilities().Has(jobstore.CapSelfRecovery), Speed: cfg.Speed()}
	if (len(cfg.Faults) > 0 || cfg.Workers.Processes > 0 || cfg.Workers.Remote > 0) && !spec.Calibration {
		srv, err := pr.pool.get(ctx, cfg.Redis)
		if err != nil {
			return fail(err)
		}
		fs, cleanup, err := pr.prepareFaults(ctx, espec, srv, be, jopts, rs.MoverLoop, &hooks)
		defer cleanup()
		if err != nil {
			return fail(fmt.Errorf("%s: fault setup: %w", spec.ID, err))
		}
		hooks.Faults = fs
	}
	res := engine.Run(ctx, espec, store, hooks)
	pr.status.end()
	pr.fill(rs, res)
	if pr.paths != nil && !spec.Calibration && be.Kind == registry.KindJobStore && rs.Status != summary.StatusError {
		rs.Probe = pr.probePaths(ctx, spec, be)
	}
	if err := pr.writeRunFiles(rs, res); err != nil {
		return rs, err
	}
	if res.Err != nil && rs.Status == summary.StatusError {
		return rs, fmt.Errorf("%s: %w", spec.ID, res.Err)
	}
	return rs, nil
}

// checkOptions builds, once, every store whose backend takes options, so a
// bad option value fails before the first run rather than after the
// calibration run. It needs a Redis to build on and does it only on one
// aebench spawned (it is flushed before each run): a store may create keys
// when it is built, and a user's Redis gets none that a run did not need.
func (pr *planRunner) checkOptions(ctx context.Context, runs []conditions.RunSpec) error {
	seen := map[string]bool{}
	for _, spec := range runs {
		cfg := spec.Config
		be, err := pr.o.Registry.Lookup(cfg.Backend.Name)
		if err != nil || be.Kind == registry.KindCalibration || !be.Shardable() && cfg.Store.Shards > 1 ||
			len(cfg.Backend.Options) == 0 && cfg.Store.Shards <= 1 {
			continue
		}
		key := fmt.Sprintf("%s|%v|%s|%s|%s|%d", cfg.Backend.Name, cfg.Backend.Options, cfg.Client, cfg.Encoding, cfg.Redis.Mode, cfg.Store.Shards)
		if seen[key] {
			continue
		}
		seen[key] = true
		rc := cfg.Redis
		if rc.Mode == "url" {
			// A server given by URL is the user's: the options are checked
			// on a private embedded server instead, so the check writes
			// nothing there (without redis-server here, it is skipped).
			rc = conditions.RedisConfig{Mode: "embedded", HZ: 10, Persistence: "none"}
		}
		srv, err := pr.pool.get(ctx, rc)
		if err != nil {
			if cfg.Redis.Mode == "url" {
				continue
			}
			return err
		}
		client, err := rclient.New(cfg.Client, srv.r.ClientOptions())
		if err != nil {
			return err
		}
		store, err := newStore(ctx, be, client, cfg, runStoreOptions(cfg, "aeb-check-"+randHex(3)))
		if err == nil {
			err = store.Close()
		}
		client.Close()
		if errors.Is(err, jobstore.ErrInvalid) {
			return &scenario.ConfigError{File: pr.s.File, Line: cfg.Backend.Line, Column: cfg.Backend.Col,
				Field: "backends (" + cfg.Backend.Label + ") options", Msg: err.Error()}
		}
		if err != nil {
			return fmt.Errorf("building %s: %w", cfg.Backend.Label, err)
		}
	}
	return nil
}
