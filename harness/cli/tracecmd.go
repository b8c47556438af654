package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/aebench/aebench/harness/trace"
)

const traceHelp = `Usage: aebench trace synth --out FILE [flags]
       aebench trace check FILE

synth writes a synthetic arrival trace for producers.trace (docs/traces.md),
for people without one of their own: Poisson arrivals whose rate follows a
diurnal curve, with bursts at seeded times, some delayed jobs, payloads
spread around a mean and three kinds. The same flags write the same file.
  --out FILE         where to write the CSV (required; - for stdout)
  --duration D       the trace's length (default 1m)
  --rate N           mean jobs/s (default 300)
  --period D         the curve's period (default 1m: a day compressed)
  --swing X          the curve's amplitude, a share of the rate 0..1 (default 0.5)
  --bursts N         bursts (default 2) of --burst-x times the rate (5) for --burst-len (3s)
  --delayed X        share of delayed jobs (default 0.1), delays uniform up to --max-delay (2s)
  --payload N        mean payload bytes (default 256)
  --seed N           the seed (default 1)

check parses FILE as a run would, and prints its arrivals, span and
arrivals per second, or the first malformed line.

Exit codes: 0 written (or valid), 2 a usage error or a malformed trace.
`

func cmdTrace(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usageErr(stderr, "trace", fmt.Errorf("want synth or check"))
	}
	switch args[0] {
	case "synth":
		return traceSynth(args[1:], stdout, stderr)
	case "check":
		if len(args) != 2 {
			return usageErr(stderr, "trace", fmt.Errorf("check takes one file"))
		}
		data, err := os.ReadFile(args[1])
		if err != nil {
			return usageErr(stderr, "trace", err)
		}
		tr, err := trace.Parse(args[1], data, 256)
		if err != nil {
			fmt.Fprintf(stderr, "aebench trace: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s: %d arrivals over %s (%.1f jobs/s), per second: %v\n", args[1], len(tr.Arrivals), tr.Span(),
			float64(len(tr.Arrivals))/tr.Span().Seconds(), tr.PerSecond())
		return exitOK
	}
	return usageErr(stderr, "trace", fmt.Errorf("%q: allowed: synth, check", args[0]))
}

func traceSynth(args []string, stdout, stderr io.Writer) int {
	s := trace.DefaultSynth()
	fs := flag.NewFlagSet("aebench trace synth", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "")
	fs.DurationVar(&s.Duration, "duration", s.Duration, "")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "")
	fs.DurationVar(&s.Period, "period", s.Period, "")
	fs.Float64Var(&s.Swing, "swing", s.Swing, "")
	fs.IntVar(&s.Bursts, "bursts", s.Bursts, "")
	fs.Float64Var(&s.BurstX, "burst-x", s.BurstX, "")
	fs.DurationVar(&s.BurstLen, "burst-len", s.BurstLen, "")
	fs.Float64Var(&s.Delayed, "delayed", s.Delayed, "")
	fs.DurationVar(&s.MaxDelay, "max-delay", s.MaxDelay, "")
	fs.IntVar(&s.Payload, "payload", s.Payload, "")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "")
	if err := fs.Parse(args); err != nil {
		return usageErr(stderr, "trace", err)
	}
	if *out == "" || fs.NArg() > 0 {
		return usageErr(stderr, "trace", fmt.Errorf("synth needs --out FILE and no arguments"))
	}
	var buf bytes.Buffer
	n, err := s.Write(&buf)
	if err != nil {
		return usageErr(stderr, "trace", err)
	}
	if *out == "-" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "aebench trace: %v\n", err)
		return exitUsage
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "%s: %d arrivals over %s\n", *out, n, s.Duration)
	}
	return exitOK
}
