// Package window is what the plain programs of bench/plain share outside
// their loops: the flags every one takes, and the measured window (jobs/s
// and this process's CPU per job after a warm-up), printed as the one JSON
// line `aebench peer-check` reads. Nothing of aebench is in it.
package window

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Flags are the flags every plain program takes.
type Flags struct {
	Addr, Password   string
	Jobs, Payload    int
	Warmup, Duration time.Duration
}

// Parse registers the common flags beside the program's own (already
// defined on flag.CommandLine), parses, and exits 2 without -addr.
func Parse(name string, jobs int) Flags {
	var f Flags
	flag.StringVar(&f.Addr, "addr", "", "Redis host:port (required; a loopback address)")
	flag.StringVar(&f.Password, "password", "", "Redis password")
	flag.IntVar(&f.Jobs, "jobs", jobs, "jobs loaded before the drain")
	flag.IntVar(&f.Payload, "payload", 64, "payload bytes")
	flag.DurationVar(&f.Warmup, "warmup", time.Second, "drain time not measured")
	flag.DurationVar(&f.Duration, "window", 2*time.Second, "drain time measured")
	flag.Parse()
	if f.Addr == "" {
		fmt.Fprintf(os.Stderr, "plain %s: -addr is required (the Redis to use; aebench peer-check passes its own)\n", name)
		os.Exit(2)
	}
	return f
}

// Measure waits out the warm-up, then counts done over the window and
// prints {"jobs_per_s", "client_cpu_us_per_job", "jobs"} on stdout.
func Measure(f Flags, done func() int64) {
	time.Sleep(f.Warmup)
	n0, c0, t0 := done(), cpu(), time.Now()
	time.Sleep(f.Duration)
	n1, c1, t1 := done(), cpu(), time.Now()
	if n1 >= int64(f.Jobs) {
		// Idle time in the window would read as slowness.
		fmt.Fprintf(os.Stderr, "plain: the %d jobs ran out before the window ended; raise -jobs\n", f.Jobs)
		os.Exit(1)
	}
	n := float64(n1 - n0)
	out, _ := json.Marshal(map[string]float64{"jobs_per_s": n / t1.Sub(t0).Seconds(),
		"client_cpu_us_per_job": float64(c1-c0) / float64(time.Microsecond) / n, "jobs": n})
	fmt.Println(string(out))
}

// cpu is this process's user and system CPU so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
