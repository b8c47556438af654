package lab

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/redisserver"
)

// DriversCheckHelp is the help of `aebench drivers check`.
const DriversCheckHelp = `aebench drivers check [--command "RUNTIME SCRIPT"] PATH

Runs the driver in folder PATH through the driver protocol's conformance
(docs/drivers.md, "Checking a driver") on a redis-server it spawns: the
hello and its declarations; enqueue acks and refusals, each under its
request's seq; inspect and stats; worker events with the system's own
timestamps (started, then completed, in Unix nanoseconds); a delayed job
against the early start the hello declares; a retry; a SIGKILL of a
worker holding a job, against the recovery or loss the hello declares; a
clean shutdown. Each rule prints pass, FAIL naming what broke it, or
declared (the driver said it does not, and it did not). About half a
minute; a system whose retries wait long takes up to a minute more.

The command that starts the driver is --command, else that of the driver
of the same name in drivers/ (bullmq, sidekiq, rq), else found from the
folder: driver.js (node), driver.rb (ruby), driver.py (python3). The
role is appended to it. Exit 0 when no rule fails, 1 when one does.
`

// DriversCheck is `aebench drivers check`.
func DriversCheck(ctx context.Context, args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("drivers check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, DriversCheckHelp) }
	command := fs.String("command", "", "the runtime and script that start the driver, e.g. \"python3 driver.py\"")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "aebench drivers check: name one driver folder (PATH)")
		return exitUsage
	}
	spec, err := checkSpec(fs.Arg(0), *command)
	if err != nil {
		fmt.Fprintf(stderr, "aebench drivers check: %v\n", err)
		return exitUsage
	}
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn})
	if err != nil {
		fmt.Fprintf(stderr, "aebench drivers check: %v\n", err)
		return exitInfra
	}
	defer r.Close()
	host, port, _ := strings.Cut(r.Addrs[0], ":")
	p, _ := strconv.Atoi(port)
	fmt.Fprintf(stdout, "driver %s in %s (%s), on redis-server %s\n", spec.Name, spec.Path, strings.Join(spec.Command, " "), r.Addrs[0])
	res := driver.Check(ctx, spec, driver.RedisAddr{Host: host, Port: p, Password: r.Password})
	failed := 0
	for _, c := range res {
		fmt.Fprintf(stdout, "%-9s %-17s %s\n", c.Status, c.Rule, c.Detail)
		if c.Status == driver.CheckFail {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d rules failed\n", failed, len(res))
		return exitFailed
	}
	fmt.Fprintf(stdout, "every rule passed or was declared (%d rules)\n", len(res))
	return exitOK
}

// checkSpec is the driver in folder path: its command from command, from
// the driver of the same name here, or from the script the folder holds.
func checkSpec(path, command string) (driver.Spec, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return driver.Spec{}, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return driver.Spec{}, fmt.Errorf("%s: not a folder (PATH is the driver's folder)", path)
	}
	spec := driver.Spec{Name: filepath.Base(abs), Path: abs, Install: "see the driver's README"}
	for _, s := range driver.Specs() {
		if s.Name == spec.Name {
			spec = s
			spec.Path = abs
		}
	}
	if command != "" {
		spec.Command = strings.Fields(command)
		spec.Probe, spec.Needs = nil, ""
	}
	if len(spec.Command) == 0 {
		for _, f := range []struct{ file, runtime string }{{"driver.js", "node"}, {"driver.rb", "ruby"}, {"driver.py", "python3"}} {
			if _, err := os.Stat(filepath.Join(abs, f.file)); err == nil {
				spec.Command = []string{f.runtime, f.file}
				break
			}
		}
	}
	if len(spec.Command) == 0 {
		return spec, fmt.Errorf("%s: no driver.js, driver.rb or driver.py, and no --command", path)
	}
	return spec, nil
}
