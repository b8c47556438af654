package cli

import (
	"github.com/aebench/aebench/harness/lab"
)

// The commands' help, one text per command, printed the same by aebench
// help X and aebench X --help.

const mainHelp = `aebench: benchmark and simulation harness for Redis-backed job stores.

Usage: (typical duration on 2 cores in brackets)
  aebench run [flags] SCENARIO   run a scenario file or a shipped one by name (aebench run quick) [quick: 1.5 min]
  aebench plan [flags] SCENARIO  check a scenario and print its cells, runs and estimated wall time [seconds]
  aebench init [DIR]             write a commented starter scenario (--redis-url, --backends) [instant]
  aebench schema                 the JSON Schema of scenario files, for editors (scenarios/scenario.schema.json) [instant]
  aebench completion SHELL       a completion script for bash, zsh or fish [instant]
  aebench trace synth --out FILE a synthetic arrival trace for producers.trace; trace check FILE parses one [instant]
  aebench list [flags]           list backends and scenarios (shipped in the binary outside a checkout) [instant]
  aebench claims [--quick]       judge the seeds' claims, reproduce their flaws [about 25 min; --quick 5]
  aebench drivers [--overhead]   the job-system drivers (BullMQ, Sidekiq, RQ): declarations, overhead [seconds; --overhead 2 min]
  aebench peer-check             aebench's asynq and floor against plain programs on one Redis [6-7 min]
  aebench doctor URL|HOST:PORT   what aebench can and cannot measure on that Redis (TLS, ACL, managed) [seconds]
  aebench compare BASE NEW       compare two result sets, gate on regressions [seconds]
  aebench export --format benchstat DIR   Go benchmark text for benchstat [instant]
  aebench report DIR [BASE]      write DIR/report.html [seconds]
  aebench worker --coordinator HOST:PORT   serve one remote worker of a run (workers.remote) [the run's length]
  aebench help [COMMAND]         help on a command (also aebench COMMAND --help)
  aebench version                this binary's version, revision, Go and client library versions (also --version)

Exit codes: 0 ok, 1 a run failed its correctness checks, 2 usage or
configuration error, 3 infrastructure error (no Redis), 4 a threshold
crossed or a regression found, 5 (with --strict-health) a verdict that
rests on a suspect run: retry on a quieter machine, 130 interrupted.
`

const runHelp = `Usage: aebench run [flags] SCENARIO

Runs every run of the scenario (matrix cells x repeats x backends, plus a
calibration run of the in-process null backend per cell) and writes
results/<UTC time>-<scenario>/ (or the --out directory): summary.json,
report.html, one .hlog per run, .hgrm per histogram, timeseries.csv, PNG/SVG
plots, and last the file "complete" when every planned run ran (aebench
compare refuses a directory without it). Prints a status line every second
and a comparison table at the end; the last line is "results: DIR". Ctrl-C
stops the producers, drains for up to 3s and writes what was measured (exit
130); press it twice to abort.

Flags (may come before or after SCENARIO):
  --set path=value   override a scenario field; repeatable; value is YAML, so
                     --set producers.rate=[1000,5000] makes a matrix
  --duration D       = --set duration=D     --warmup D = --set warmup=D
  --drain D          = --set drain=D        --seed N   = --set seed=N
  --repeats N        = --set repeats=N      --rate R   = --set producers.rate=R
  --client NAME      = --set client=NAME (go-redis, rueidis)
  --redis MODE       = --set redis.mode=MODE (embedded, cluster, container, url)
  --redis-url URL    run on an existing Redis (never flushed): redis.mode=url
  --backends a,b     run only these backends (names or labels)
  --calibration X    off, on, or a duration for the null-backend run
  --out DIR          the results directory itself (must be new or empty);
                     default results/<UTC time>-<scenario>
  --no-plots         skip the PNG/SVG plots
  --output NAME      turn on an optional output format; repeatable. jsonl:
                     samples.jsonl, one JSON object per run and second,
                     written as the run goes
  --metrics-addr A   serve live OpenMetrics at http://A/metrics during the
                     run (A on a loopback address: 127.0.0.1:9464)
  --quiet            print only the final tables, the thresholds and the
                     results line (no status, run headers or per-run lines)
  --strict-health    exit 5 when a run's measurement health is suspect (its
                     threads starved of CPU, its producers late, its
                     calibration slow): CI retries it instead of failing

Fields and their allowed values: scenarios/README.md, or aebench list --fields.
`

const listHelp = `Usage: aebench list [--dir DIR] [--fields]

Lists the backends (name, description, options) and the scenario files in
DIR (default scenarios). --fields lists every scenario field with its
default and allowed values.
`

// commandHelp is command name's help: the same text for aebench help NAME
// and aebench NAME --help.
func commandHelp(name string) (string, bool) {
	h, ok := map[string]string{"run": runHelp, "plan": planHelp, "init": initHelp, "schema": schemaHelp, "completion": completionHelp, "trace": traceHelp, "list": listHelp, "doctor": doctorHelp, "compare": compareHelp,
		"export": exportHelp, "report": reportHelp, "claims": lab.ClaimsHelp, "drivers": lab.DriversHelp,
		"peer-check": lab.PeerCheckHelp, "worker": workerHelp, "version": versionHelp, "help": mainHelp}[name]
	return h, ok
}

// asksHelp says whether a command's arguments ask for its help.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		case "--":
			return false
		}
	}
	return false
}

const versionHelp = `Usage: aebench version (or --version)

Prints this binary's version, git revision, Go version and the versions of
the client libraries that shape the numbers (go-redis, rueidis,
hdrhistogram-go, asynq).
`

const workerHelp = `Usage: aebench worker --coordinator HOST:PORT [--bind IP]

Serves one worker of a run whose scenario sets workers.remote: it connects
to the run, gets its configuration, builds the store against the run's
Redis (which must be reachable from here) and streams its events and
histograms until the run ends. Worker processes of workers.processes are
started by the run itself.

Flags:
  --coordinator HOST:PORT   the run waiting for remote workers (it prints it)
  --bind IP                 local IP address to connect from (a loopback alias stands for a host)

Exit codes: 0 the run ended, 1 the connection or the store failed, 2 a usage error.
`

const schemaHelp = `Usage: aebench schema

Prints the JSON Schema (draft 2020-12) of scenario files, generated from
the field table: every section and field with its doc, allowed values and
default, and no field it does not know. scenarios/scenario.schema.json is
this output (a test keeps them equal). An editor with the YAML language
server completes and checks a scenario given, as its first line:
  # yaml-language-server: $schema=scenario.schema.json
(a path relative to the file, or the schema's URL).

Exit codes: 0 printed, 2 a usage error.
`
