package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/aebench/aebench/procio"
)

// EventPace is how long a reader of driver events lets them gather (as
// the engine reads worker processes, procio.PacedReader).
const EventPace = 10 * time.Millisecond

// MinOverheadRatio is the least share of its plain loop's jobs/s a driver
// must reach for its peer to count as measured at its honest best.
const MinOverheadRatio = 0.9

// OverheadResult compares a driver with the plain loop in its language
// that uses only the system's API, draining prefilled jobs with the same
// concurrency and empty handlers, in turns (see Overhead).
type OverheadResult struct {
	Driver      string
	Jobs        int
	Concurrency int
	Rounds      int
	// Loops and Drivers are each round's jobs/s; Ratios each round's
	// driver/loop. A round is SlicesPerRound turns of each, interleaved,
	// so a ratio pairs two runs under the same machine load. The verdict
	// reads the median of Ratios with its interval (harness/cli).
	Loops, Drivers, Ratios []float64
}

// Calibration bounds: each side prefills enough jobs for its measured
// turns after a warm-up fifth; BullMQ drains about 26,000 jobs a second
// here in its turns, Sidekiq 19,000, RQ 1,800. The cap leaves BullMQ its
// rounds: at 120,000 it got 10, whose interval (0.86-0.96 around a median
// of 0.91) could not tell 0.9x from below; at 40 rounds (aebench drivers'
// default) it needs about 700,000 a side.
const (
	minCalibrated = 2000
	maxCalibrated = 800_000
	// warmJobs: a side's turns count once it has completed this many jobs
	// (or a fifth of them, if fewer): its runtime has started and warmed.
	warmJobs = 3000
)

// Calibrate runs the loop once on a queue of its own (discarded: it also
// warms Redis up) and returns a job count that lasts each side of
// Overhead its rounds' turns, its warm-up and a second of start-up, with
// a margin, rounded to hundreds and kept within [minCalibrated,
// maxCalibrated].
func Calibrate(ctx context.Context, spec Spec, addr RedisAddr, concurrency, rounds int) (int, error) {
	const probe = 3000
	ps, err := runLoop(ctx, spec, Config{Role: "loop", Redis: addr, Queue: "aebench-overhead-" + spec.Name + "-calibrate",
		Concurrency: concurrency, Jobs: probe, Payload: strings.Repeat("a", 64), RetentionMs: 600_000, IDPrefix: "C"})
	if err != nil {
		return 0, err
	}
	measured := float64(rounds*SlicesPerRound) * Slice.Seconds()
	// 1.6 times that: a probe of a fresh runtime runs slower than a long
	// drain (BullMQ's JIT; a 1,000-job probe saw a third of the rate of its
	// turns), and a count that falls short gives fewer rounds.
	n := (int(1.6*ps*(measured+1)) + warmJobs) / 100 * 100
	return min(max(n, minCalibrated), maxCalibrated), nil
}

// Overhead measures the driver against its plain loop in turns: both
// processes start on prefilled queues of their own, and aebench lets one
// run at a time for Slice (the other stopped with SIGSTOP), alternating.
// Each side runs alone, so neither measures the other's load, and a slow
// moment of a shared machine falls on both sides of a round rather than
// on one of two runs a few seconds apart (on this 2-core VM one second of
// a CPU loop ran up to a half slower than the next). jobs 0 asks
// Calibrate for the count.
func Overhead(ctx context.Context, spec Spec, addr RedisAddr, jobs, concurrency, rounds int) (OverheadResult, error) {
	if !inTurns {
		return OverheadResult{Driver: spec.Name}, fmt.Errorf("driver %s: the overhead check pauses processes with SIGSTOP, which needs Linux", spec.Name)
	}
	if jobs == 0 {
		n, err := Calibrate(ctx, spec, addr, concurrency, rounds)
		if err != nil {
			return OverheadResult{Driver: spec.Name}, err
		}
		jobs = n
	}
	res := OverheadResult{Driver: spec.Name, Jobs: jobs, Concurrency: concurrency}
	q := "aebench-overhead-" + spec.Name
	payload := strings.Repeat("a", 64)
	loopCfg := Config{Role: "loop", Redis: addr, Queue: q + "-loop", Concurrency: concurrency, Jobs: jobs,
		Payload: payload, RetentionMs: 600_000, Prefilled: true, IDPrefix: "L"}
	drvCfg := Config{Redis: addr, Queue: q + "-driver", Concurrency: concurrency, RetentionMs: 600_000, IDPrefix: "D"}
	for _, c := range []Config{loopCfg, drvCfg} {
		if err := prefill(ctx, spec, c, jobs); err != nil {
			return res, err
		}
	}
	loop, drv, err := runInTurns(ctx, spec, loopCfg, drvCfg, jobs)
	if err != nil {
		return res, err
	}
	res.Loops, res.Drivers, res.Ratios = pairRounds(loop, drv, min(jobs/5, warmJobs))
	res.Rounds = len(res.Ratios)
	if res.Rounds < 3 {
		return res, fmt.Errorf("driver %s: %d jobs gave %d rounds of %d turns of %v each after the warm-up; raise --jobs",
			spec.Name, jobs, res.Rounds, SlicesPerRound, Slice)
	}
	return res, nil
}

// runLoop runs the driver's loop role on the round's prefilled jobs and
// reads its jobs/s (Calibrate's probe).
func runLoop(ctx context.Context, spec Spec, cfg Config) (float64, error) {
	if err := prefill(ctx, spec, Config{Redis: cfg.Redis, Queue: cfg.Queue, RetentionMs: cfg.RetentionMs, IDPrefix: cfg.IDPrefix}, cfg.Jobs); err != nil {
		return 0, err
	}
	cfg.Prefilled = true
	cmd, err := spec.Cmd(ctx, cfg)
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("driver %s: loop: %w: %s", spec.Name, err, lastLine(stderr.String()))
	}
	res, err := loopResult(spec.Name, out)
	return res.JobsPS, err
}

// loopOut is the loop role's last line: its rate over the last four
// fifths, and each completion's time (CLOCK_REALTIME ns).
type loopOut struct {
	E      string  `json:"e"`
	JobsPS float64 `json:"jobs_per_s"`
	Times  []int64 `json:"times"`
}

func loopResult(name string, out []byte) (loopOut, error) {
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev loopOut
		if json.Unmarshal(line, &ev) == nil && ev.E == "loop" {
			return ev, nil
		}
	}
	return loopOut{}, fmt.Errorf("driver %s: loop printed no result: %q", name, lastLine(string(out)))
}

// completedAt reads a completed event's time without decoding the line:
// the reader shares the machine's cores with the system it times, so it
// costs as little as it can (json.Unmarshal of two events a job was a
// visible share of a core at BullMQ's rate). BullMQ's and Sidekiq's
// drivers write the compact shape {"e":"completed",...,"t":N,...}; any
// other line that may be a completion is decoded (RQ's json.dumps).
func completedAt(line []byte) (int64, bool) {
	if !bytes.HasPrefix(line, []byte(`{"e":"completed"`)) {
		if !bytes.Contains(line, []byte("completed")) {
			return 0, false
		}
		var ev struct {
			E string `json:"e"`
			T int64  `json:"t"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.E != "completed" {
			return 0, false
		}
		return ev.T, ev.T > 0
	}
	i := bytes.Index(line, []byte(`"t":`))
	if i < 0 {
		return 0, false
	}
	var t int64
	for _, c := range line[i+4:] {
		if c < '0' || c > '9' {
			break
		}
		t = t*10 + int64(c-'0')
	}
	return t, t > 0
}

// prefill enqueues the jobs of a round through the driver's client, in
// batches of 100, for the loop and the driver alike: both then drain the
// same jobs, enqueued the same way, from a process that enqueued nothing
// itself (a runtime warmed by its own enqueues would favour the loop).
func prefill(ctx context.Context, spec Spec, cfg Config, jobs int) error {
	cfg.Jobs, cfg.Prefilled = 0, false // the client only enqueues
	cl, err := startRole(ctx, spec, cfg, "client")
	if err != nil {
		return err
	}
	defer cl.close()
	for i := 0; i < jobs; i += 100 {
		batch := make([]wireJob, 0, 100)
		for k := i; k < min(jobs, i+100); k++ {
			batch = append(batch, wireJob{ID: cfg.IDPrefix + strconv.Itoa(k), P: strings.Repeat("a", 64), H: [][2]int64{{0, 0}}})
		}
		if err := cl.call(map[string]any{"op": "enqueue", "seq": i, "jobs": batch}); err != nil {
			return err
		}
	}
	return nil
}

// role is a driver process started for the overhead check.
type role struct {
	spec   Spec
	stdin  io.WriteCloser
	sc     *bufio.Scanner
	cmd    *exec.Cmd
	out    *os.File
	stderr *strings.Builder
}

func startRole(ctx context.Context, spec Spec, cfg Config, name string) (*role, error) {
	cfg.Role = name
	cmd, err := spec.Cmd(ctx, cfg)
	if err != nil {
		return nil, err
	}
	ownGroup(cmd)
	r := &role{spec: spec, stderr: &strings.Builder{}, cmd: cmd}
	cmd.Stderr = r.stderr
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := procio.Start(cmd)
	if err != nil {
		return nil, err
	}
	r.out = out
	r.sc = bufio.NewScanner(&procio.PacedReader{R: out, Pace: EventPace})
	r.sc.Buffer(make([]byte, 64<<10), 16<<20)
	if _, err := readHello(spec.Name, r.sc); err != nil {
		killGroup(cmd)
		return nil, fmt.Errorf("%w: %s", err, lastLine(r.stderr.String()))
	}
	return r, nil
}

// call sends one request and reads its reply (the overhead check's client
// is used one request at a time).
func (r *role) call(req map[string]any) error {
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := r.stdin.Write(append(line, '\n')); err != nil {
		return err
	}
	if !r.sc.Scan() {
		return fmt.Errorf("driver %s ended: %s", r.spec.Name, lastLine(r.stderr.String()))
	}
	var rep reply
	if err := json.Unmarshal(r.sc.Bytes(), &rep); err != nil || rep.E != "ack" {
		return fmt.Errorf("driver %s: %s answered %q", r.spec.Name, req["op"], r.sc.Text())
	}
	return nil
}

// close ends the process as the engine does: stdin closes, and what has
// not exited 10s later is killed with its children.
func (r *role) close() {
	_ = r.stdin.Close()
	t := time.AfterFunc(10*time.Second, func() { killGroup(r.cmd) })
	defer t.Stop()
	for r.sc.Scan() { // drain, so the process is not blocked on its stdout
	}
	_ = r.cmd.Wait()
	_ = r.out.Close()
}
