package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aebench/aebench/backends/driver"
	"github.com/aebench/aebench/harness/summary"
)

// driverCase is a job system measured end to end: `aebench run` of its
// driver against a plain program (bench/plain/<system>) written apart from
// the driver, sharing no code with it, that uses only the system's public
// API with the defaults its documents show. Both drain a backlog of jobs
// with empty handlers at the same concurrency; jobs is enough for
// aebench's warm-up and window at the system's rate here, with room.
type driverCase struct {
	spec  driver.Spec
	conc  int
	jobs  int
	plain []string // runtime and script, from the repository's root
}

// driverCases: BullMQ at the concurrency aebench drivers --overhead uses
// (4) and at 50, Sidekiq at 10 (its default is 5; 10 as the plain
// loop ran it), RQ with 4 worker processes.
func driverCases() []driverCase {
	return []driverCase{
		{driver.BullMQ, 4, 60000, []string{"node", "bench/plain/bullmq/plain.js"}},
		{driver.BullMQ, 50, 90000, []string{"node", "bench/plain/bullmq/plain.js"}},
		{driver.Sidekiq, 10, 50000, []string{"ruby", "bench/plain/sidekiq/plain.rb"}},
		{driver.RQ, 4, 6000, []string{"drivers/rq/.venv/bin/python", "bench/plain/rq/plain.py"}},
	}
}

func (c driverCase) name() string { return fmt.Sprintf("%s c%d", c.spec.Name, c.conc) }

// driverScenario is what aebench runs: a prefilled backlog, a producer at
// 1 job/s so the backlog is all there is, one worker process of the
// case's concurrency, empty handlers, jobs/s over 5 s after a 3 s warm-up:
// the plain programs leave their first fifth out (about 2 s here), and a
// fresh runtime's heap and caches take seconds to settle (Sidekiq's
// per-second completions rose over its first 4 s in one run).
func (c driverCase) driverScenario() string {
	return fmt.Sprintf(`name: peer-driver-%s-c%d
seed: 5
duration: 5s
warmup: 3s
drain: 200ms
calibration: off
backends: [%s]
producers: {count: 1, rate: 1, payload: 64, delayed: 0, max_retries: 0, prefill: %d}
workers: {count: 1, processes: 1, concurrency: %d, handler: 0, fail: 0}
`, c.spec.Name, c.conc, c.spec.Name, c.jobs, c.conc)
}

// drivers runs every installed driver's case in rounds, the order of the
// two sides rotating, Redis flushed before each side, and prints each
// case's line in peer-check's table: the paired median of aebench's
// jobs/s over the plain program's with its interval, judged as the
// overhead check judges (ok, BELOW, inconclusive when the interval
// straddles 0.9x). It returns exitThresh when a median is below 0.9x.
func (e peerEnv) drivers(ctx context.Context, rounds int) int {
	code := exitOK
	for _, c := range driverCases() {
		if why, err := driver.Missing(ctx, c.spec); err != nil || why != "" {
			fmt.Fprintf(e.stdout, "%-7s  skipped: %v%s\n", c.name(), err, why)
			continue
		}
		var ratios, plainPS, aePS []float64
		var err error
		for i := range rounds {
			var pl, ae float64
			sides := []func() error{
				func() (err error) { pl, err = e.runDriverPlain(ctx, c); return err },
				func() (err error) { ae, err = e.runDriverAebench(ctx, c, i); return err },
			}
			for k := range sides {
				if err = e.rdb.FlushAll(ctx).Err(); err != nil {
					break
				}
				if err = sides[(i+k)%len(sides)](); err != nil {
					break
				}
			}
			if err != nil {
				break
			}
			plainPS, aePS, ratios = append(plainPS, pl), append(aePS, ae), append(ratios, ae/pl)
		}
		if err != nil {
			fmt.Fprintf(e.stdout, "%-7s  error: %v\n", c.name(), err)
			code = max(code, exitInfra)
			continue
		}
		iv := medianInterval("ratio", ratios)
		verdict, ok := overheadVerdict(iv)
		if !ok {
			code = max(code, exitThresh)
		}
		fmt.Fprintf(e.stdout, "%-7s  %-18s  %11.0f  %11.0f  %5.2fx (%s-%s, %.0f%%)  %13s  %13s  %-22s  %s\n", c.name(), filepath.Dir(c.plain[1]),
			medianOf(plainPS), medianOf(aePS), iv.Estimate, fmtN(iv.Lo), fmtN(iv.Hi), 100*iv.Coverage, "-", "-", "-", verdict)
		fmt.Fprintf(e.stdout, "%-7s  by round (aebench run over the plain program; the order rotates: round 1 runs plain first): %s\n", "", numberList(ratios, 2))
	}
	return code
}

// runDriverPlain runs the case's plain program on the check's Redis and
// reads its jobs/s.
func (e peerEnv) runDriverPlain(ctx context.Context, c driverCase) (float64, error) {
	host, port, _ := strings.Cut(e.addr, ":")
	args := append(c.plain[1:], "--host", host, "--port", port, "--password", e.password, "--jobs", strconv.Itoa(c.jobs),
		"--concurrency", strconv.Itoa(c.conc), "--queue", "plain")
	cmd := exec.CommandContext(ctx, c.plain[0], args...)
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(e.root, "drivers", "bullmq", "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %w: %s", c.plain[1], err, lastLineOf([]byte(stderr.String())))
	}
	var res struct {
		JobsPS float64 `json:"jobs_per_s"`
	}
	if err := json.Unmarshal([]byte(lastLineOf(out)), &res); err != nil || res.JobsPS <= 0 {
		return 0, fmt.Errorf("%s printed %q, not its result line", c.plain[1], lastLineOf(out))
	}
	return res.JobsPS, nil
}

// runDriverAebench runs the case's scenario with aebench on the check's
// Redis and reads its jobs/s from summary.json, after checking that the
// backlog lasted through the window.
func (e peerEnv) runDriverAebench(ctx context.Context, c driverCase, round int) (float64, error) {
	file := filepath.Join(e.tmp, fmt.Sprintf("driver-%s-c%d.yaml", c.spec.Name, c.conc))
	if err := os.WriteFile(file, []byte(c.driverScenario()), 0o644); err != nil {
		return 0, err
	}
	out := filepath.Join(e.tmp, fmt.Sprintf("driver-%s-c%d-%d", c.spec.Name, c.conc, round))
	cmd := exec.CommandContext(ctx, e.self, "run", file, "--redis-url", redisURL(e.addr, e.password), "--out", out, "--quiet", "--no-plots")
	cmd.Dir = e.root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if o, err := cmd.Output(); err != nil {
		return 0, fmt.Errorf("aebench run (%s): %w: %s %s", c.name(), err, lastLineOf(o), lastLineOf([]byte(stderr.String())))
	}
	sum, err := summary.Read(filepath.Join(out, "summary.json"))
	if err != nil || len(sum.Runs) != 1 {
		return 0, fmt.Errorf("%s: want one run in summary.json (%v)", out, err)
	}
	if err := backlogHeld(filepath.Join(out, "timeseries.csv")); err != nil {
		return 0, fmt.Errorf("aebench run (%s): %w", c.name(), err)
	}
	return sum.Runs[0].Throughput.Completed, nil
}
