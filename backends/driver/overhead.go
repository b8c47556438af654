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
// that uses only the system's API, draining the same prefilled jobs with
// the same concurrency and empty handlers.
type OverheadResult struct {
	Driver      string
	Jobs        int
	Concurrency int
	Rounds      int
	// Loops and Drivers are each round's jobs/s; Ratios each round's
	// driver/loop (a round runs both, one after the other, so a ratio pairs
	// two runs under the same machine load). The verdict reads the median
	// of Ratios with its interval (harness/cli).
	Loops, Drivers, Ratios []float64
}

// Calibration bounds: a round's drain should last about CalibrateDrain, so
// that a moment of the shared machine's noise is a small part of it, and
// a runtime's warm-up (the first fifth, not timed) is over before the rate
// is taken; BullMQ drains 3000 jobs in a third of a second.
const (
	CalibrateDrain = time.Second
	minCalibrated  = 2000
	maxCalibrated  = 30000
)

// Calibrate runs the loop once on a queue of its own (discarded: it also
// warms Redis up) and returns the job count whose drain lasts about
// CalibrateDrain at the rate it saw, rounded to hundreds and kept within
// [minCalibrated, maxCalibrated].
func Calibrate(ctx context.Context, spec Spec, addr RedisAddr, concurrency int) (int, error) {
	const probe = 1000
	ps, err := runLoop(ctx, spec, Config{Role: "loop", Redis: addr, Queue: "aebench-overhead-" + spec.Name + "-calibrate",
		Concurrency: concurrency, Jobs: probe, Payload: strings.Repeat("a", 64), RetentionMs: 600_000})
	if err != nil {
		return 0, err
	}
	n := int(ps*CalibrateDrain.Seconds()/100) * 100
	return min(max(n, minCalibrated), maxCalibrated), nil
}

// Overhead runs the loop and the driver alternately, rounds times each,
// on the Redis at addr (each round on queues of its own). jobs 0 asks
// Calibrate for the count.
func Overhead(ctx context.Context, spec Spec, addr RedisAddr, jobs, concurrency, rounds int) (OverheadResult, error) {
	if jobs == 0 {
		n, err := Calibrate(ctx, spec, addr, concurrency)
		if err != nil {
			return OverheadResult{Driver: spec.Name}, err
		}
		jobs = n
	}
	res := OverheadResult{Driver: spec.Name, Jobs: jobs, Concurrency: concurrency, Rounds: rounds}
	var loops, drivers []float64
	for i := range rounds {
		q := fmt.Sprintf("aebench-overhead-%s-%d", spec.Name, i)
		loop := func() (float64, error) {
			return runLoop(ctx, spec, Config{Role: "loop", Redis: addr, Queue: q + "-loop", Concurrency: concurrency, Jobs: jobs,
				Payload: strings.Repeat("a", 64), RetentionMs: 600_000})
		}
		drv := func() (float64, error) {
			return runDriver(ctx, spec, Config{Redis: addr, Queue: q + "-driver", Concurrency: concurrency, RetentionMs: 600_000}, jobs)
		}
		// Alternate which goes first, so neither always meets the other's
		// leftovers in Redis.
		first, second := loop, drv
		if i%2 == 1 {
			first, second = drv, loop
		}
		a, err := first()
		if err != nil {
			return res, err
		}
		b, err := second()
		if err != nil {
			return res, err
		}
		if i%2 == 1 {
			a, b = b, a
		}
		loops, drivers = append(loops, a), append(drivers, b)
	}
	res.Loops, res.Drivers = loops, drivers
	for i := range loops {
		res.Ratios = append(res.Ratios, drivers[i]/loops[i])
	}
	return res, nil
}

// runLoop prefills the round's jobs, then runs the driver's loop role on
// them and reads its jobs/s.
func runLoop(ctx context.Context, spec Spec, cfg Config) (float64, error) {
	if err := prefill(ctx, spec, Config{Redis: cfg.Redis, Queue: cfg.Queue, RetentionMs: cfg.RetentionMs}, cfg.Jobs); err != nil {
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
	for _, line := range strings.Split(string(out), "\n") {
		var ev struct {
			E       string  `json:"e"`
			JobsPS  float64 `json:"jobs_per_s"`
			Seconds float64 `json:"seconds"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.E == "loop" {
			return ev.JobsPS, nil
		}
	}
	return 0, fmt.Errorf("driver %s: loop printed no result: %q", spec.Name, lastLine(string(out)))
}

// runDriver enqueues jobs through the driver's client (batches of 100),
// then starts one worker process and times it from its jobs/5-th to its
// last completed event read here, as the engine reads them.
func runDriver(ctx context.Context, spec Spec, cfg Config, jobs int) (float64, error) {
	if err := prefill(ctx, spec, cfg, jobs); err != nil {
		return 0, err
	}
	w, err := startRole(ctx, spec, cfg, "worker")
	if err != nil {
		return 0, err
	}
	defer w.close()
	// The rate is taken over the last four fifths, as the loops take it:
	// the first fifth warms a fresh runtime up.
	skip := jobs / 5
	var t0, t1 int64
	done := 0
	for done < jobs && w.sc.Scan() {
		t, ok := completedAt(w.sc.Bytes())
		if !ok {
			continue
		}
		done++
		if done == skip {
			t0 = t
		}
		t1 = max(t1, t)
	}
	if done < jobs {
		return 0, fmt.Errorf("driver %s: worker ended after %d of %d jobs: %s", spec.Name, done, jobs, lastLine(w.stderr.String()))
	}
	return float64(jobs-skip) / time.Duration(t1-t0).Seconds(), nil
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
	cl, err := startRole(ctx, spec, cfg, "client")
	if err != nil {
		return err
	}
	defer cl.close()
	for i := 0; i < jobs; i += 100 {
		batch := make([]wireJob, 0, 100)
		for k := i; k < min(jobs, i+100); k++ {
			batch = append(batch, wireJob{ID: "D" + strconv.Itoa(k), P: strings.Repeat("a", 64), H: [][2]int64{{0, 0}}})
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
