package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aebench/aebench/harness/scenario"
)

const initHelp = `Usage: aebench init [--redis-url URL] [--backends a,b] [DIR]

Writes DIR/scenario.yaml (DIR default: the current directory), a starter
scenario with a comment on every field: an open-loop load on the backends
named (default zset and dual), on the Redis at URL (default: an embedded
server aebench spawns). Run it with aebench run DIR/scenario.yaml; aebench
list --fields lists every field. It never overwrites a file.

Exit codes: 0 written, 2 a usage error or the file exists.
`

// starter is the scenario aebench init writes; %s are the Redis block and
// the backends list.
const starter = `# A starter scenario (aebench init). Every field: aebench list --fields.
name: my-scenario
description: >
  An open-loop load on %[2]s: Poisson arrivals at 500 jobs/s, 10%% of jobs
  delayed 100ms-1s, 1%% of handlers failing and retried.
seed: 1
duration: 20s      # the measured window
warmup: 5s         # excluded from every histogram
drain: 15s         # after the producers stop: jobs left running finish
repeats: 1         # 3 or more give every median a 95%% interval
%[1]s
backends: [%[2]s]  # aebench list shows them all with their options
producers:
  count: 2
  mode: open       # open loop: latency counts from each job's planned time
  rate: 500        # jobs/s, all producers together
  arrivals: poisson
  delayed: 0.1     # the share of jobs enqueued with a RunAt in the future
  delay: "uniform(100ms, 1s)"
  max_retries: 3
workers:
  count: 4
  concurrency: 8
  handler: "exponential(2ms)"   # how long a job's handler runs
  fail: 0.01       # the share of attempts that fail and are retried
  lease: 30s
thresholds:        # aebench run exits 4 when one is crossed
  - lost < 1
  - early < 1
`

func cmdInit(args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("aebench init", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("redis-url", "", "")
	backends := fs.String("backends", "zset, dual", "")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) > 1 {
		return usageErr(stderr, "init", errors.Join(err, errors.New("want at most one DIR")))
	}
	dir := "."
	if len(pos) == 1 {
		dir = pos[0]
	}
	redis := "redis:\n  mode: embedded   # a private redis-server on a free loopback port"
	if *url != "" {
		redis = fmt.Sprintf("redis:\n  mode: url        # your Redis: aebench never flushes it\n  url: %q", *url)
	}
	names := strings.Join(strings.Fields(strings.ReplaceAll(*backends, ",", " ")), ", ")
	text := fmt.Sprintf(starter, redis, names)
	path := filepath.Join(dir, "scenario.yaml")
	if _, err := scenario.ParseScenario(path, []byte(text)); err != nil {
		return usageErr(stderr, "init", err) // a backend name that does not exist
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErr(stderr, "init", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return usageErr(stderr, "init", fmt.Errorf("%w (init never overwrites a file)", err))
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return usageErr(stderr, "init", err)
	}
	fmt.Fprintf(stdout, "wrote %s; run it with: aebench run %s\n", path, path)
	return exitOK
}
