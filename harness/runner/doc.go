// Package runner composes a plan of runs: it starts the Redis servers a
// scenario needs, builds each run's stores from the backend registry, takes
// Redis's cost per job (package rediscost) and the environment, runs the
// engine, keeps summary.json current after every run, has package analysis
// finish the summary, and hands runs and plan to the outputs (package
// output: the terminal's tables, summary.json, report.html, plots,
// timeseries.csv, .hgrm ...). It formats nothing but its own progress: the
// run headers and the status line. It is also the body of `aebench
// worker` (WorkerMain).
//
// Imports go down: cmd/aebench -> cli -> runner -> output -> analysis ->
// verdict, summary, engine, scenario ->
// jobstore, backends/registry -> backends -> rclient. No backend imports it.
// The null calibration store runs first in each matrix cell, so every plan
// measures the harness's own overhead beside the stores.
package runner
