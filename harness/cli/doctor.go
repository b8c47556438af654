package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

const doctorHelp = `Usage: aebench doctor URL|HOST:PORT

Says what aebench can and cannot measure on the Redis at URL
(HOST:PORT, redis://[[user]:password@]host:port[/db], or rediss:// with
?ca_file=&cert_file=&key_file=&skip_verify=&server_name= for TLS): INFO
access (Redis CPU, memory and bytes per job), INFO commandstats (commands
per job), Functions (FUNCTION LOAD and DELETE of a test library of its own;
the stores fall back to EVALSHA where they are refused), EVAL, CONFIG
(managed services refuse it; aebench needs it only on servers it spawns)
cluster mode, and the maxmemory-policy (a WARNING unless noeviction: an
evicting policy loses jobs without an error). It writes nothing else. aebench run makes the same
checks before the first run on a server given by URL.

Exit codes: 0 a run can proceed, 3 it cannot (a required check failed, or
no Redis answers), 2 a usage error.
`

// cmdDoctor is `aebench doctor URL`.
func cmdDoctor(ctx context.Context, args []string, opts Options) int {
	stdout, stderr := opts.Stdout, opts.Stderr
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, doctorHelp) }
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, "aebench doctor: want one URL or HOST:PORT\n\n"+doctorHelp)
		return exitUsage
	}
	rclient.RouteGoRedisLog(&rclient.ClientLog{}) // the error below says it once
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := redisserver.Start(ctx, redisserver.Options{Mode: redisserver.ModeURL, URL: redisURLOf(fs.Arg(0))})
	if err != nil {
		fmt.Fprintf(stderr, "aebench doctor: %v\n", err)
		if strings.Contains(err.Error(), "bad Redis URL") {
			return exitUsage
		}
		return exitInfra
	}
	defer r.Close()
	rep := redisserver.Doctor(ctx, r)
	printDoctor(stdout, rep)
	if !rep.Runnable() {
		return exitInfra
	}
	return exitOK
}

func printDoctor(w io.Writer, rep redisserver.Report) {
	fmt.Fprintf(w, "Redis %s at %s: user %s, TLS %v, cluster %v\n\n", rep.Version, rep.Addr, rep.User, rep.TLS, rep.Cluster)
	fmt.Fprintf(w, "%-24s  %-8s  %s\n", "check", "result", "what aebench needs it for")
	for _, c := range rep.Checks {
		res := "ok"
		if !c.OK {
			res = "refused"
			if !c.Required {
				res = "refused*"
			}
			if c.Warn {
				res = "WARNING"
			}
		}
		fmt.Fprintf(w, "%-24s  %-8s  %s\n", c.Name, res, c.Needed)
		if c.Detail != "" {
			fmt.Fprintf(w, "%-24s  %-8s  (%s)\n", "", "", c.Detail)
		}
	}
	if rep.Runnable() {
		fmt.Fprintln(w, "\nA run can proceed. (* not required: what it costs is said beside it.)")
		return
	}
	fmt.Fprintln(w, "\nA run cannot proceed:")
	for _, p := range rep.Problems() {
		fmt.Fprintln(w, "  "+p)
	}
}

// redisURLOf takes HOST:PORT as redis://HOST:PORT; a URL stays as it is.
func redisURLOf(arg string) string {
	if strings.Contains(arg, "://") {
		return arg
	}
	return "redis://" + arg
}
