// Package runner composes a plan of runs: it starts the Redis servers a
// scenario needs, builds each run's stores from the backend registry, takes
// Redis's cost per job (package rediscost) and the environment, runs the
// engine, and writes the results folder: summary.json with its statistics
// block, report.html, timeseries.csv, .hlog/.hgrm files, plots and the
// comparison tables. It is also the body of `aebench worker` (WorkerMain).
//
// Imports go down: cmd/aebench -> cli -> runner -> summary, engine, scenario ->
// jobstore, backends/registry -> backends -> rclient. No backend imports it.
// The null calibration store runs first in each matrix cell, so every plan
// measures the harness's own overhead beside the stores.
package runner
