package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/stats"
)

// Run statuses, as summary.json writes them.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
)

// ErrSchema reports a summary.json this version cannot read.
var ErrSchema = summary.ErrSchema

// Set is one results directory: what compare, export and the report read.
type Set struct {
	// Source is the summary.json read; Dir its directory.
	Source, Dir string
	Schema      int
	Scenario    string
	// Description of the scenario, and where it came from.
	Description, File string
	Repeats           int
	// Thresholds is the scenario's thresholds block as written;
	// ThresholdResults what the run found for each (summary.json's).
	Thresholds       []string
	ThresholdResults []summary.ThresholdResult
	StartedAt        time.Time
	Complete         bool // summary.json's complete, and the complete flag file (Load)
	Interrupted      bool
	Env              Env
	Cells            []Cell
	Runs             []Run
	// Stats is the statistics block as stored (schema 2), nil in older files.
	Stats *stats.Block
	// Units documents the summary's units, as stored.
	Units map[string]string
	// IncompleteWhy says why Complete is false.
	IncompleteWhy string
	// Error is what stopped the plan (summary.json's error); PlotError
	// what failed in the plots.
	Error, PlotError string
}

// Env is where the runs ran.
type Env struct {
	GoVersion, OS, Arch string
	CPUs                int
	GitRevision         string
	GitDirty            bool
	RedisVersions       []string
	Clients             []string
	Note                string
	// CPUModel, Kernel and Modules (library -> version) as recorded; empty
	// in files written before they were.
	CPUModel, Kernel string
	Modules          map[string]string
}

// Machine names the machine kind, one of the conditions compare checks.
func (e Env) Machine() string { return fmt.Sprintf("%s/%s, %d CPUs", e.OS, e.Arch, e.CPUs) }

// Cell is one matrix cell.
type Cell struct {
	Index int
	Vary  []string
}

// Run is one run of one backend.
type Run struct {
	ID, Label, Backend, Client string
	Cell, Repeat               int
	Calibration                bool
	// Kind is the backend's registry kind; a reference (the floor) is
	// measured and shown but never gates (see Reference).
	Kind          string
	Status, Error string
	Problems      []string
	// Conditions is the run's one-line statement of its conditions (load,
	// client, Redis version, handler...).
	Conditions   string
	RedisVersion string
	// ResolutionNs, on simulated time, is one real millisecond in
	// simulated time (0 on real time): runs of different resolutions are
	// never compared.
	ResolutionNs int64
	// Metered: Redis ran under callgrind (redis.meter instructions), so the
	// run's timings are distorted: never compared with an unmetered run's.
	Metered bool
	// Served: the store's own worker loop ran aebench's handler
	// (summary.json's served), so the scenario's worker settings did not
	// apply to it.
	Served bool
	// CountNoise: the spread the backend declares in its counted per-job
	// metrics; they gate no tighter than it.
	CountNoise float64
	// Values maps a catalog metric's name to the run's value; a metric the
	// run did not measure is absent.
	Values map[string]float64
	Ledger Ledger
	Faults *Faults
	// Ratios compare the run with the floor and the cell's best strategy
	// (summary.json's ratios; absent for the references themselves).
	Ratios map[string]summary.Ratio
	// Offered is the open loop's planned rate, jobs/s (0: closed loop).
	Offered float64
	// Health is the run's measurement health (nil in files written before
	// it was judged).
	Health *summary.Health
	// Record is the run's record this view was built from (nil for a Run
	// made otherwise): what the view does not carry, such as its phases.
	Record *summary.RunSummary
}

// Key is the group the run belongs to.
func (r Run) Key() stats.Key { return stats.Key{Cell: r.Cell, Backend: r.Label, Client: r.Client} }

// Measured says the run's numbers cover a full measured window.
func (r Run) Measured() bool { return r.Status == StatusOK || r.Status == StatusFailed }

// Ledger is the correctness books of a run.
type Ledger struct {
	Attempted, Acknowledged, Completed, DeadLettered int64
	Lost                                             int64
	LostExpected                                     bool
	Unexpected, Duplicated, Early                    int64
	// SeedVariant: a seed variant's run, whose lost and early jobs are the
	// flaw it reproduces, expected, not a failure.
	SeedVariant bool
}

// Incorrect says why the run failed its correctness checks, or "": a lost
// (unless expected), unexpected or early job is always a failure.
func (r Run) Incorrect() string {
	l := r.Ledger
	switch {
	case l.Lost > 0 && !l.LostExpected:
		return fmt.Sprintf("%d lost", l.Lost)
	case l.Unexpected > 0:
		return fmt.Sprintf("%d unexpected", l.Unexpected)
	case l.Early > 0 && !l.SeedVariant:
		return fmt.Sprintf("%d started early", l.Early)
	case r.Status == StatusFailed && r.Error != "":
		return r.Error
	case r.Status == StatusFailed:
		return "failed its correctness checks"
	}
	return ""
}

// Faults is what a run's faults did.
type Faults struct {
	Landed, Skipped, Affected, Restarted, Duplicates, Lost int
	// NeverStarted: jobs in flight whose handler had not started;
	// DeadUnstarted, ReturnedUnstarted: the run's jobs dead-lettered on an
	// attempt that never started, and hand-offs returned without one.
	NeverStarted, DeadUnstarted, ReturnedUnstarted int
	ByKind                                         map[string]int
	RecoveryP50Ns, RecoveryP99Ns, RecoveryMaxNs    float64
}

// CompleteFlag is the file a run writes last in its results directory,
// once every planned run ran and every other file is written: its absence
// marks a run that failed, was interrupted or was killed mid-way.
const CompleteFlag = "complete"

// Load reads a results directory or a summary.json file (whose directory
// must carry the complete flag for the set to be complete).
func Load(path string) (*Set, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	file := path
	if st.IsDir() {
		file = filepath.Join(path, "summary.json")
	}
	s, err := ReadSummary(file)
	if err != nil {
		return nil, err
	}
	s.Source, s.Dir = file, filepath.Dir(file)
	_, ferr := os.Stat(filepath.Join(s.Dir, CompleteFlag))
	s.explainIncomplete(ferr == nil)
	return s, nil
}

// FromPlan is the set of a plan as the runner holds it in memory, for the
// outputs of its end: flagged says its complete flag will follow (every
// planned run ran and none hit an infrastructure error).
func FromPlan(sum *summary.Summary, dir string, flagged bool) (*Set, error) {
	s, err := FromSummary(sum)
	if err != nil {
		return nil, err
	}
	s.Stats, s.Dir, s.Source = sum.Statistics, dir, filepath.Join(dir, "summary.json")
	s.explainIncomplete(flagged)
	return s, nil
}

// explainIncomplete sets IncompleteWhy, and clears Complete when the
// complete flag is missing (flagged false).
func (s *Set) explainIncomplete(flagged bool) {
	switch {
	case !s.Complete && s.Interrupted:
		s.IncompleteWhy = "interrupted (Ctrl-C)"
	case !s.Complete:
		s.IncompleteWhy = "not every planned run ran (stopped by an error, or still running)"
	case !flagged:
		s.Complete = false
		s.IncompleteWhy = "no " + CompleteFlag + " flag file: the run failed, was killed or is still writing (or predates the flag)"
	}
}

// values reads every catalog metric of a run.
func values(rs *summary.RunSummary) map[string]float64 {
	out := map[string]float64{}
	for _, m := range catalog {
		if v, ok := m.get(rs); ok {
			out[m.Name] = v
		}
	}
	return out
}

// Reference says a backend kind is a reference (the floor): measured beside
// the job stores for the ratios, it is not one, so it never gates a
// threshold or a comparison.
func Reference(kind string) bool { return kind == string(jobstore.KindReference) }

// OnlyBackends keeps the runs of the backends named (by name or label),
// so that a set of every strategy can be compared with a set of some (a
// gate mutant's run of the one strategy it touches). It fails when a name
// has no run in the set.
func (s *Set) OnlyBackends(names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = false
	}
	var kept []Run
	for _, r := range s.Runs {
		for _, n := range []string{r.Backend, r.Label} {
			if _, ok := want[n]; ok {
				want[n] = true
				kept = append(kept, r)
				break
			}
		}
	}
	for _, n := range names {
		if !want[n] {
			return fmt.Errorf("%s has no run of backend %q", s.Source, n)
		}
	}
	s.Runs = kept
	return nil
}
