package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/harness/engine"
	"github.com/aebench/aebench/harness/summary"
)

// capacityKey names what a capacity probe measured: one backend in one
// cell of the plan (its repeats share the probe).
type capacityKey struct {
	cell  int
	label string
}

// errProbeNotApplicable: the backend does not apply to the settings, so
// neither does its run.
var errProbeNotApplicable = errors.New("the probe does not apply")

// probeWarmup is the probe's warm-up, excluded as a run's is.
const probeWarmup = 2 * time.Second

// resolveCapacity gives a spec whose phases wait on a measured capacity
// (producers.capacity: measure) its capacity: the completed jobs/s of a
// closed-loop probe of the same backend and settings, run once per cell and
// backend just before its first run, on the same fresh Redis. The probe
// runs without faults, with the run's workers (processes too); its figures and
// conditions are recorded in the run's capacity_source.
func (pr *planRunner) resolveCapacity(ctx context.Context, spec conditions.RunSpec) (conditions.RunSpec, error) {
	if !spec.Config.CapacityPending() {
		return spec, nil
	}
	key := capacityKey{spec.Cell, spec.Config.Backend.Label}
	if pr.capacity == nil {
		pr.capacity = map[capacityKey]conditions.Config{}
	}
	if got, ok := pr.capacity[key]; ok {
		spec.Config.SetCapacity(got.Producers.Capacity, got.Producers.CapacitySource)
		return spec, nil
	}
	mu, source, err := pr.probeCapacity(ctx, spec)
	if errors.Is(err, errProbeNotApplicable) {
		return spec, nil // the run itself says why it does not apply
	}
	if err != nil {
		return spec, fmt.Errorf("%s: capacity probe: %w", spec.ID, err)
	}
	spec.Config.SetCapacity(mu, source)
	pr.capacity[key] = spec.Config
	return spec, nil
}

// probeCapacity runs the closed-loop probe of spec's backend and settings
// and returns its completed jobs/s with a sentence saying how it was had.
func (pr *planRunner) probeCapacity(ctx context.Context, spec conditions.RunSpec) (float64, string, error) {
	cfg := spec.Config
	cfg.Phases, cfg.Faults = nil, nil
	cfg.Producers.Mode, cfg.Producers.CapacityProbe = "closed", 0
	cfg.Warmup, cfg.Duration = probeWarmup, spec.Config.Producers.CapacityProbe
	// A backlog of four times what the workers can hold keeps every slot
	// fed without leaving a long drain behind (the probe's jobs are
	// drained and checked, but only its throughput is used). The capacity
	// is thus measured over a short backlog: a store that slows as its
	// backlog grows shows as a gap to the fluid model.
	// Plus a batch a producer: with producers batching 100 and 32 slots,
	// a backlog of 128 held one batch, and the stream's probe measured
	// 3455 jobs/s where its overload then completed 5001 (overload.yaml).
	slots := cfg.Workers.Count * cfg.Workers.Concurrency * max(cfg.Workers.ClaimBatch, 1)
	cfg.Producers.MaxBacklog = min(cfg.Producers.MaxBacklog, max(4*slots, 100)+cfg.Producers.Count*max(cfg.Producers.Batch, 1))
	cfg.Drain = min(cfg.Drain, 10*time.Second)
	probe := conditions.RunSpec{ID: spec.ID + "-capacity", Cell: spec.Cell, Repeat: spec.Repeat, Config: cfg}
	be, err := pr.o.Registry.Lookup(cfg.Backend.Name)
	if err != nil {
		return 0, "", err
	}
	rs := &summary.RunSummary{ID: probe.ID, Config: cfg}
	client, _, closeProxy, err := pr.connect(ctx, be, rs)
	if err != nil {
		return 0, "", err
	}
	defer closeProxy()
	if client != nil {
		defer client.Close()
	}
	store, jopts, err := pr.buildStore(ctx, probe, be, client, rs)
	if err != nil {
		return 0, "", err
	}
	if store == nil {
		return 0, "", fmt.Errorf("%w: %s", errProbeNotApplicable, rs.NotApplicable)
	}
	defer store.Close()
	fmt.Fprintf(pr.progress, "  capacity probe for %s: closed loop (backlog <= %d) for %s after %s warm-up\n",
		spec.ID, cfg.Producers.MaxBacklog, cfg.Duration, cfg.Warmup)
	real := probe
	real.Config = cfg.RealTime()
	hooks := engine.Hooks{Label: cfg.Backend.Label, Status: pr.status.line, Mover: rs.MoverLoop, Speed: cfg.Speed()}
	if cfg.Workers.Processes > 0 || cfg.Workers.Remote > 0 {
		// The run's worker processes, so the probe measures what the run
		// will drive.
		srv, err := pr.pool.get(ctx, cfg.Redis)
		if err != nil {
			return 0, "", err
		}
		fs, cleanup, err := pr.prepareFaults(ctx, real, srv, be, jopts, rs.MoverLoop, &hooks)
		defer cleanup()
		if err != nil {
			return 0, "", fmt.Errorf("worker processes: %w", err)
		}
		hooks.Faults = fs
	}
	res := engine.Run(ctx, real, store, hooks)
	pr.status.end()
	switch {
	case res.Err != nil:
		return 0, "", res.Err
	case res.Interrupted:
		return 0, "", context.Canceled
	case res.Throughput.Completed <= 0:
		return 0, "", fmt.Errorf("the probe completed no job in %s", cfg.Duration)
	}
	mu := res.Throughput.Completed
	source := fmt.Sprintf("measured: %.0f jobs/s completed by a closed-loop probe (backlog <= %d) of the same backend and settings, %s after %s warm-up, without faults",
		mu, cfg.Producers.MaxBacklog, cfg.Duration, cfg.Warmup)
	if !res.Ledger.OK {
		source += fmt.Sprintf("; the probe's ledger failed (lost %d): %v", res.Ledger.Lost, res.Ledger.Problems)
	}
	fmt.Fprintf(pr.progress, "  capacity %s: %.0f jobs/s\n", spec.Config.Backend.Label, mu)
	return mu, source, nil
}
