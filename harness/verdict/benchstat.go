package verdict

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"golang.org/x/perf/benchfmt"
)

// WriteBenchstat writes the set as Go benchmark text that benchstat reads:
// one line per run (repeat), named
// <Scenario>/cell=N/backend=LABEL/client=C, with one value per measured
// catalog metric in its BenchUnit (ns/e2e-p99, jobs/s, µs-redis-cpu/job...),
// and a "Unit ... better=" line per unit so benchstat knows the direction.
// The conditions go in file configuration lines, which benchstat uses to
// keep differently configured results apart.
func WriteBenchstat(w io.Writer, s *Set) error {
	bw := benchfmt.NewWriter(w)
	seen := map[string]bool{}
	for _, m := range catalog {
		for _, r := range s.Runs {
			if _, ok := r.Values[m.Name]; ok && !r.Calibration && !seen[m.BenchUnit] {
				seen[m.BenchUnit] = true
				if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: m.BenchUnit, Key: "better"},
					OrigUnit: m.BenchUnit, Value: m.Better.String()}); err != nil {
					return err
				}
			}
		}
	}
	name := benchName(s.Scenario)
	for _, r := range s.Runs {
		if r.Calibration || !r.Measured() {
			continue
		}
		res := &benchfmt.Result{Name: benchfmt.Name(fmt.Sprintf("%s/cell=%d/backend=%s/client=%s", name, r.Cell,
			nameSafe(r.Label), nameSafe(r.Client))), Iters: 1}
		for _, kv := range [][2]string{{"goos", s.Env.OS}, {"goarch", s.Env.Arch}, {"cpus", fmt.Sprint(s.Env.CPUs)},
			{"scenario", s.Scenario}, {"conditions", r.Conditions}} {
			res.Config = append(res.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
		for _, m := range catalog {
			if v, ok := r.Values[m.Name]; ok {
				res.Values = append(res.Values, benchfmt.Value{Value: v, Unit: m.BenchUnit})
			}
		}
		if len(res.Values) == 0 {
			continue
		}
		if err := bw.Write(res); err != nil {
			return err
		}
	}
	return nil
}

// benchName makes the scenario name a benchmark name: benchfmt adds the
// "Benchmark" prefix, and the Go format wants what follows it to start
// with an upper-case letter.
func benchName(scenario string) string {
	n := nameSafe(scenario)
	if n == "" {
		return "Aebench"
	}
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	if !unicode.IsUpper(r[0]) {
		return "Aebench_" + n
	}
	return string(r)
}

// nameSafe keeps a name part free of what splits a benchmark name: spaces,
// '/' and '='.
func nameSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' || r == '=' {
			return '_'
		}
		return r
	}, s)
}
