package lab

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

// DriversHelp is the command's help.
const DriversHelp = `aebench drivers [--overhead] [--jobs N] [--concurrency N] [--rounds N] [NAME...]

Lists the job-system drivers (drivers/, docs/drivers.md) with what each
declares, or how to install it. With --overhead, measures each installed
driver against the plain loop in its language that uses only the system's
API: both drain prefilled jobs with empty handlers and the same concurrency
on an embedded Redis, in turns: one runs for 100 ms while the other is
paused (SIGSTOP), alternating, so each runs alone and a slow moment of the
machine falls on both. A round is 4 turns of each; the verdict is on the
median of the rounds' ratios, with its order-statistics interval and that
interval's coverage beside it; the word reads the interval (ok, BELOW, or
inconclusive when it straddles 0.9x), the exit code the median. Without
--jobs, a first run of the loop (discarded) picks a job count that lasts
--rounds rounds. A driver below 0.9x its loop's jobs/s would have its peer
measured below its honest best: exit 4.

` + DriversCheckHelp

// Drivers is `aebench drivers`.
func Drivers(ctx context.Context, args []string, opts Options) int {
	if len(args) > 0 && args[0] == "check" {
		return DriversCheck(ctx, args[1:], opts)
	}
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("drivers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, DriversHelp) }
	overhead := fs.Bool("overhead", false, "measure each driver against its plain loop")
	jobs := fs.Int("jobs", 0, "jobs each side drains (0: calibrated to last --rounds rounds)")
	conc := fs.Int("concurrency", 4, "worker concurrency of both")
	rounds := fs.Int("rounds", 40, "rounds of turns (each side runs SlicesPerRound turns a round)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *jobs < 0 || *conc < 1 || *rounds < 1 {
		fmt.Fprintln(stderr, "aebench drivers: --concurrency and --rounds must be at least 1, --jobs at least 0 (0 calibrates)")
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
		PrintDriver(stdout, s)
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
	fmt.Fprintf(stdout, "\noverhead: each driver against its plain loop, in turns of %v (a round: %d of each), concurrency %d, empty handlers, on %s\n",
		driver.Slice, driver.SlicesPerRound, *conc, r.Addrs[0])
	fmt.Fprintf(stdout, "%-8s  %12s  %14s  %-24s  %s\n", "driver", "loop jobs/s", "driver jobs/s", "ratio (interval, cover)", "verdict")
	code := exitOK
	for _, s := range installed {
		res, err := driver.Overhead(ctx, s, addr, *jobs, *conc, *rounds)
		if err != nil {
			fmt.Fprintf(stdout, "%-8s  error: %v\n", s.Name, err)
			code = exitInfra
			continue
		}
		iv := medianInterval("ratio", res.Ratios)
		verdict, ok := overheadVerdict(iv)
		if !ok {
			code = exitThresh
		}
		loopPS, driverPS := medianInterval("loop", res.Loops).Estimate, medianInterval("driver", res.Drivers).Estimate
		fmt.Fprintf(stdout, "%-8s  %12.0f  %14.0f  %5.2fx (%s-%s, %.0f%%)  %s\n", s.Name, loopPS, driverPS,
			iv.Estimate, fmtN(iv.Lo), fmtN(iv.Hi), 100*iv.Coverage, verdict)
		fmt.Fprintf(stdout, "%-8s  %d jobs each side, %d rounds; jobs/s a round: loop %s; driver %s\n", "", res.Jobs, res.Rounds,
			numberList(res.Loops, 0), numberList(res.Drivers, 0))
	}
	return code
}

// overheadVerdict: the gate (the bool, and so the exit code) reads the
// median of the rounds' ratios against driver.MinOverheadRatio; the word
// reads the interval, as the claims' verdicts do, so an interval that
// straddles the threshold is called inconclusive whichever side the
// median is on (more --rounds narrow it).
func overheadVerdict(iv interval) (string, bool) {
	th := driver.MinOverheadRatio
	pass := iv.Estimate >= th
	switch {
	case iv.Lo >= th:
		return fmt.Sprintf("ok: at least %.1fx over the whole interval", th), pass
	case iv.Hi < th:
		return fmt.Sprintf("BELOW %.1fx over the whole interval: the peer would run below its best", th), pass
	case pass:
		return fmt.Sprintf("inconclusive: the median is at least %.1fx, the interval reaches below (more --rounds narrow it)", th), pass
	default:
		return fmt.Sprintf("inconclusive, gated BELOW: the median is under %.1fx, the interval reaches above (more --rounds narrow it)", th), pass
	}
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

// numberList is xs as "12 15 ..." with prec decimals, in their order.
func numberList(xs []float64, prec int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', prec, 64)
	}
	return strings.Join(parts, " ")
}
