package verdict

// This file is the only one that knows summary.json's types (package
// summary).

import (
	"fmt"

	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/stats"
)

// ReadSummary reads a summary.json of schema version 1 or 2 (summary.Read).
func ReadSummary(path string) (*Set, error) {
	sum, err := summary.Read(path)
	if err != nil {
		return nil, err
	}
	s, err := FromSummary(sum)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Stats, s.Source = sum.Statistics, path
	return s, nil
}

// FromSummary converts summary.json's summary to the verdict model.
func FromSummary(sum *summary.Summary) (*Set, error) {
	e := sum.Environment
	s := &Set{Schema: sum.SchemaVersion, Scenario: sum.Scenario.Name, Description: sum.Scenario.Description,
		File: sum.Scenario.File, Repeats: sum.Scenario.Repeats, Thresholds: sum.Scenario.Thresholds, StartedAt: sum.StartedAt, Complete: sum.Complete,
		Interrupted: sum.Interrupted, Units: sum.Units, Error: sum.Error, PlotError: sum.PlotError, ThresholdResults: sum.Thresholds,
		Env: Env{GoVersion: e.GoVersion, OS: e.OS, Arch: e.Arch, CPUs: e.CPUs, GitRevision: e.GitRevision,
			GitDirty: e.GitDirty, Clients: e.Clients, Note: e.Note, CPUModel: e.CPUModel, Kernel: e.Kernel, Modules: e.Modules}}
	for _, r := range e.Redis {
		s.Env.RedisVersions = append(s.Env.RedisVersions, r.Version)
	}
	for _, c := range sum.Scenario.Cells {
		s.Cells = append(s.Cells, Cell{Index: c.Index, Vary: c.Vary})
	}
	for i := range sum.Runs {
		r, err := fromRun(&sum.Runs[i])
		if err != nil {
			return nil, err
		}
		s.Runs = append(s.Runs, r)
	}
	return s, nil
}

func fromRun(rs *summary.RunSummary) (Run, error) {
	l := rs.Ledger
	r := Run{ID: rs.ID, Label: rs.Label, Backend: rs.Backend, Client: rs.Client, Cell: rs.Cell, Repeat: rs.Repeat,
		Calibration: rs.Calibration, Kind: rs.Kind, Status: rs.Status, Error: rs.Error, Problems: rs.Problems,
		Conditions: rs.Conditions, ResolutionNs: rs.ResolutionNs, CountNoise: rs.CountNoise, Values: values(rs), Served: rs.Served,
		Ledger: Ledger{Attempted: l.Attempted, Acknowledged: l.Acknowledged, Completed: l.Completed,
			DeadLettered: l.DeadLettered, Lost: l.Lost, LostExpected: l.LostExpected, Unexpected: l.Unexpected,
			Duplicated: l.DuplicatedExecutions, Early: l.StartedEarly, SeedVariant: l.SeedVariant}}
	if r.Label == "" {
		r.Label = r.Backend
	}
	r.Ratios, r.Health, r.Offered, r.Record = rs.Ratios, rs.Health, rs.Throughput.Offered, rs
	if rs.Redis != nil {
		r.RedisVersion, r.Metered = rs.Redis.Version, rs.Redis.Meter == "instructions"
	}
	if rv := rs.Recovery; rv != nil {
		f := &Faults{Landed: rv.Landed, Skipped: rv.Skipped, Affected: rv.Affected, Restarted: rv.Restarted,
			Duplicates: rv.Duplicates, Lost: rv.Lost, ByKind: map[string]int{}, NeverStarted: rv.NeverStarted,
			DeadUnstarted: int(rs.Ledger.DeadUnstarted), ReturnedUnstarted: int(rs.Ledger.ReturnedUnstarted),
			RecoveryP50Ns: rv.RecoveryNs["p50"], RecoveryP99Ns: rv.RecoveryNs["p99"], RecoveryMaxNs: rv.RecoveryNs["max"]}
		for k, n := range rv.Faults {
			f.ByKind[string(k)] = n
		}
		r.Faults = f
	}
	return r, nil
}

// AggregateSummary is Aggregate over summary.json's summary: the runner
// calls it after the last run and stores the block as summary.json's
// "statistics" (with schema_version stats.SchemaVersion).
func AggregateSummary(sum *summary.Summary) (*stats.Block, error) {
	s, err := FromSummary(sum)
	if err != nil {
		return nil, err
	}
	return Aggregate(s), nil
}
