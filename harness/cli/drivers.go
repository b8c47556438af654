package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/redisserver"
)

const driversHelp = `aebench drivers [--overhead] [--jobs N] [--concurrency N] [--rounds N] [NAME...]

Lists the job-system drivers (drivers/, docs/drivers.md) with what each
declares, or how to install it. With --overhead, measures each installed
driver against the plain loop in its language that uses only the system's
API: both drain the same prefilled jobs with empty handlers and the same
concurrency on an embedded Redis, one after the other (which first
alternates), --rounds times; the verdict is on the median of the rounds'
ratios, whose range is printed beside it. A driver below 0.9x its loop's jobs/s exits 1: its peer would
be measured below its honest best (exit 4).
`

// cmdDrivers is `aebench drivers`.
func cmdDrivers(ctx context.Context, args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("drivers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, driversHelp) }
	overhead := fs.Bool("overhead", false, "measure each driver against its plain loop")
	jobs := fs.Int("jobs", 3000, "jobs per round")
	conc := fs.Int("concurrency", 4, "worker concurrency of both")
	rounds := fs.Int("rounds", 8, "rounds of each")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *jobs < 1 || *conc < 1 || *rounds < 1 {
		fmt.Fprintln(stderr, "aebench drivers: --jobs, --concurrency and --rounds must be at least 1")
		return exitUsage
	}
	specs, err := pickDrivers(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "aebench drivers: %v\n", err)
		return exitUsage
	}
	var installed []driver.Spec
	for _, s := range specs {
		fmt.Fprintf(stdout, "%s\n", s.Name)
		listDriver(stdout, s)
		if _, err := driver.ProbeHello(ctx, s); err == nil {
			installed = append(installed, s)
		}
	}
	if !*overhead || len(installed) == 0 {
		return exitOK
	}
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeSpawn})
	if err != nil {
		fmt.Fprintf(stderr, "aebench drivers: %v\n", err)
		return exitInfra
	}
	defer r.Close()
	host, port, _ := strings.Cut(r.Addrs[0], ":")
	p, _ := strconv.Atoi(port)
	addr := driver.RedisAddr{Host: host, Port: p, Password: r.Password}
	fmt.Fprintf(stdout, "\noverhead: each driver against its plain loop, %d jobs, concurrency %d, empty handlers, median of %d rounds, on %s\n",
		*jobs, *conc, *rounds, r.Addrs[0])
	fmt.Fprintf(stdout, "%-8s  %12s  %14s  %-18s  %s\n", "driver", "loop jobs/s", "driver jobs/s", "ratio (range)", "verdict")
	code := exitOK
	for _, s := range installed {
		res, err := driver.Overhead(ctx, s, addr, *jobs, *conc, *rounds)
		if err != nil {
			fmt.Fprintf(stdout, "%-8s  error: %v\n", s.Name, err)
			code = exitInfra
			continue
		}
		verdict := fmt.Sprintf("ok (at least %.1fx)", driver.MinOverheadRatio)
		if !res.OK() {
			verdict = fmt.Sprintf("BELOW %.1fx: the peer would run below its best", driver.MinOverheadRatio)
			code = exitThreshold
		}
		fmt.Fprintf(stdout, "%-8s  %12.0f  %14.0f  %5.2fx (%.2f-%.2f)  %s\n", s.Name, res.LoopJobsPS, res.DriverJobsPS, res.Ratio, res.RatioMin, res.RatioMax, verdict)
		fmt.Fprintf(stdout, "%-8s  rounds: loop %s; driver %s\n", "", roundList(res.Loops), roundList(res.Drivers))
	}
	return code
}

func pickDrivers(names []string) ([]driver.Spec, error) {
	all := driver.Specs()
	if len(names) == 0 {
		return all, nil
	}
	var out []driver.Spec
	for _, n := range names {
		found := false
		for _, s := range all {
			if s.Name == n {
				out, found = append(out, s), true
			}
		}
		if !found {
			known := make([]string, len(all))
			for i, s := range all {
				known[i] = s.Name
			}
			return nil, errors.New("unknown driver " + strconv.Quote(n) + "; allowed: " + strings.Join(known, ", "))
		}
	}
	return out, nil
}

func roundList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(parts, " ")
}
