package scenario

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/null"
	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/conditions"
)

const goodScenario = `
name: t1
description: a test
seed: 7
duration: 3s
warmup: 500ms
calibration: off
redis:
  mode: embedded
client: rueidis
backends:
  - zset
  - name: null
    label: calib
producers:
  rate: 250
  arrivals: constant
  delayed: 0.5
  delay: uniform(10ms, 20ms)
  payload: 1KiB
workers:
  handler: normal(2ms, 500us)
  fail: 0.1
  heartbeat: true
  lease: 3s
`

func TestParseGood(t *testing.T) {
	s, err := ParseScenario("good.yaml", []byte(goodScenario))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "t1" || s.Description != "a test" || s.Calibration != 0 || s.Repeats != 1 {
		t.Fatalf("header: %+v", s)
	}
	if len(s.Cells) != 1 {
		t.Fatalf("cells = %d, want 1", len(s.Cells))
	}
	c := s.Cells[0].Base
	checks := []struct {
		name      string
		got, want any
	}{
		{"seed", c.Seed, int64(7)},
		{"duration", c.Duration, 3 * time.Second},
		{"warmup", c.Warmup, 500 * time.Millisecond},
		{"drain default", c.Drain, 30 * time.Second},
		{"client", c.Client, "rueidis"},
		{"encoding default", c.Encoding, "hash"},
		{"rate", c.Producers.Rate, 250.0},
		{"arrivals", c.Producers.Arrivals, "constant"},
		{"payload", c.Producers.Payload, 1024},
		{"delay", c.Producers.Delay, Dist{Kind: "uniform", A: 10 * time.Millisecond, B: 20 * time.Millisecond}},
		{"handler", c.Workers.Handler, Dist{Kind: "normal", A: 2 * time.Millisecond, B: 500 * time.Microsecond}},
		{"heartbeat", c.Workers.Heartbeat, true},
		{"lease", c.Workers.Lease, 3 * time.Second},
		{"workers default", c.Workers.Count, 4},
		{"poll default", c.Store.PollInterval, 100 * time.Millisecond},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	bs := s.Cells[0].Backends
	if len(bs) != 2 || bs[0].Label != "zset" || bs[1].Name != "null" || bs[1].Label != "calib" {
		t.Fatalf("backends = %+v", bs)
	}
}

func TestMatrixExpansion(t *testing.T) {
	src := `
duration: 1s
client: [go-redis, rueidis]
backends: [zset, null]
producers:
  rate: [100, 200, 300]
`
	s, err := ParseScenario("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 6 {
		t.Fatalf("cells = %d, want 6", len(s.Cells))
	}
	// client varies slower than producers.rate (schema order).
	want := [][]string{
		{"client=go-redis", "producers.rate=100"}, {"client=go-redis", "producers.rate=200"}, {"client=go-redis", "producers.rate=300"},
		{"client=rueidis", "producers.rate=100"}, {"client=rueidis", "producers.rate=200"}, {"client=rueidis", "producers.rate=300"},
	}
	for i, c := range s.Cells {
		if !slices.Equal(c.Vary, want[i]) {
			t.Errorf("cell %d vary = %v, want %v", i+1, c.Vary, want[i])
		}
	}
	if s.Cells[4].Base.Client != "rueidis" || s.Cells[4].Base.Producers.Rate != 200 {
		t.Errorf("cell 5 = %s %v", s.Cells[4].Base.Client, s.Cells[4].Base.Producers.Rate)
	}
	// Backends are innermost; the calibration run (on by default) leads each cell.
	runs := s.Runs()
	if len(runs) != 6*3 {
		t.Fatalf("runs = %d, want 18", len(runs))
	}
	got := []string{runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID}
	if !slices.Equal(got, []string{"c1-calibration", "c1-zset", "c1-null", "c2-calibration"}) {
		t.Errorf("run order = %v", got)
	}
	if !runs[0].Calibration || runs[0].Config.Backend.Name != null.Name || runs[0].Config.Duration != time.Second {
		t.Errorf("calibration run = %+v", runs[0])
	}
}

func TestRepeatsInterleaveBackends(t *testing.T) {
	s, err := ParseScenario("r.yaml", []byte("repeats: 4\ncalibration: 2s\nbackends: [zset, null, stream]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range s.Runs() {
		ids = append(ids, r.ID)
	}
	// One cell: no c1- prefix (matrix scenarios above keep it). The order
	// rotates by round, so each backend takes each place once in three.
	want := []string{"calibration", "r1-zset", "r1-null", "r1-stream", "r2-null", "r2-stream", "r2-zset",
		"r3-stream", "r3-zset", "r3-null", "r4-zset", "r4-null", "r4-stream"}
	if !slices.Equal(ids, want) {
		t.Fatalf("runs = %v, want %v", ids, want)
	}
	if s.Runs()[0].Config.Duration != 2*time.Second {
		t.Errorf("calibration duration = %v", s.Runs()[0].Config.Duration)
	}
}

func TestParseBad(t *testing.T) {
	cases := []struct {
		name string
		src  string
		line int
		// every substring must be in the message
		want []string
	}{
		{"unknown top-level field", "backends: [zset]\ndurration: 1s\n", 2,
			[]string{"bad.yaml:2:1", `unknown field "durration" (did you mean "duration"?)`, "allowed:", "duration", "producers"}},
		{"misspelt backend", "backends: [zsett]\n", 1, []string{`unknown backend "zsett"`, `did you mean "zset"?`}},
		{"misspelt fault kind", "backends: [zset]\nfaults:\n  - {kind: worker_crsh, at: 1s}\n", 3, []string{`did you mean "worker_crash"?`}},
		{"a tab", "backends: [zset]\nproducers:\n\trate: 5\n", 3, []string{"not valid YAML", "YAML allows no tabs"}},
		{"a relative rate without a capacity", "backends: [zset]\nphases:\n  - {name: a, duration: 1s, rate: 1.5x}\n", 3, []string{"phases[0].rate", "set producers.capacity", "measure"}},
		{"capacity measure without phases", "backends: [zset]\nproducers: {capacity: measure}\n", 2, []string{"producers.capacity", "serves phases"}},
		{"a bad probe length", "backends: [zset]\nproducers: {capacity: measure(2)}\nphases:\n  - {name: a, duration: 1s, rate: 1.5x}\n", 2, []string{"producers.capacity", "measure(DURATION)"}},
		{"a ramp first", "backends: [zset]\nphases:\n  - {name: a, duration: 1s, rate: 10, ramp: true}\n", 3, []string{"phases[0].ramp", "no previous phase"}},
		{"two phases of one name", "backends: [zset]\nphases:\n  - {name: a, duration: 1s, rate: 10}\n  - {name: a, duration: 1s, rate: 20}\n", 4, []string{"phases[1].name", "names two phases"}},
		{"a phase without a rate", "backends: [zset]\nphases:\n  - {name: a, duration: 1s}\n", 3, []string{"phases[0].rate", "is required"}},
		{"a misspelt phase field", "backends: [zset]\nphases:\n  - {name: a, duration: 1s, rat: 5}\n", 3, []string{"phases[0]", `did you mean "rate"?`}},
		{"duration beside phases", "backends: [zset]\nduration: 5s\nphases:\n  - {name: a, duration: 1s, rate: 10}\n", 2, []string{"duration", "the phases' sum"}},
		{"a rate beside phases", "backends: [zset]\nproducers: {rate: 50}\nphases:\n  - {name: a, duration: 1s, rate: 10}\n", 2, []string{"producers.rate", "each phase's rate"}},
		{"a fault in an unknown phase", "backends: [zset]\nfaults:\n  - {kind: worker_crash, at: overlaod+1s}\nphases:\n  - {name: overload, duration: 2s, rate: 10}\n", 3, []string{"faults[0].at", "names no phase", `did you mean "overload"?`}},
		{"a fault after the last phase", "backends: [zset]\nfaults:\n  - {kind: worker_crash, at: a+5s}\nphases:\n  - {name: a, duration: 2s, rate: 10}\n", 3, []string{"faults[0].at", "after the last phase ends"}},
		{"a phase-relative fault without phases", "backends: [zset]\nfaults:\n  - {kind: worker_crash, at: overload+1s}\n", 3, []string{"faults[0].at", "no phases"}},
		{"a bad offset into a phase", "backends: [zset]\nfaults:\n  - {kind: worker_crash, at: overload+ten}\nphases:\n  - {name: overload, duration: 2s, rate: 10}\n", 3, []string{"faults[0]", "overload+10s"}},
		{"phases in a closed loop", "backends: [zset]\nproducers: {mode: closed}\nphases:\n  - {name: a, duration: 1s, rate: 10}\n", 4, []string{"phases", "open loop"}},
		{"maxmemory as a multiple without a known rate", "backends: [zset]\nredis: {maxmemory: 2x}\nproducers: {mode: closed}\n", 2, []string{"redis.maxmemory", "2x needs the working set", "give a size"}},
		{"a bad multiple of the working set", "backends: [zset]\nredis: {maxmemory: twox}\n", 2, []string{"redis.maxmemory", "allowed: a size"}},
		{"save points without rdb", "backends: [zset]\nredis: {save: \"5 100\"}\n", 2, []string{"redis.save", "rdb or rdb+aof-everysec"}},
		{"odd save points", "backends: [zset]\nredis: {persistence: rdb, save: \"5 100 7\"}\n", 2, []string{"redis.save", "pairs of seconds and changes"}},
		{"not a CPU list", "backends: [zset]\nredis: {cpus: one}\n", 2, []string{"redis.cpus", `"one" is not a CPU list`, "allowed: a CPU list"}},
		{"a reversed CPU range", "backends: [zset]\nredis: {cpus: 1-0}\n", 2, []string{"redis.cpus", "not a CPU list"}},
		{"a CPU the machine lacks", "backends: [zset]\nredis: {cpus: \"0,4000\"}\n", 2, []string{"redis.cpus", "names CPU 4000", "online CPUs are"}},
		{"cpus of a server not spawned", "backends: [zset]\nredis: {mode: url, url: \"redis://127.0.0.1:7/\", cpus: \"0\"}\n", 2, []string{"redis.cpus", "a server aebench spawns"}},
		{"drift windows out of range", "backends: [zset]\ndrift: {windows: 2}\n", 2, []string{"drift.windows", "3 to 60"}},
		{"unknown section field", "backends: [zset]\nproducers:\n  rate: 10\n  rat: 5\n", 4,
			[]string{"bad.yaml:4:3", "producers", `unknown field "rat"`, "allowed: count, mode, rate"}},
		{"bad duration", "backends: [zset]\nduration: 10 seconds\n", 2,
			[]string{"duration", `"10 seconds" is not a duration`, "allowed: a duration > 0"}},
		{"negative rate", "backends: [zset]\nproducers:\n  rate: -5\n", 3,
			[]string{"producers.rate", "-5 must be > 0", "allowed: a number > 0"}},
		{"zero rate", "backends: [zset]\nproducers:\n  rate: 0\n", 3, []string{"producers.rate", "must be > 0"}},
		{"unknown backend", "backends: [zset, kafka]\n", 1,
			[]string{"backends[1]", `unknown backend "kafka"`, "allowed are zset", "null"}},
		{"unknown backend option", "backends:\n  - name: zset\n    options: {speed: fast}\n", 3,
			[]string{"backends[0].options", "speed"}},
		{"bad distribution", "backends: [zset]\nworkers:\n  handler: gaussian(1ms)\n", 3,
			[]string{"workers.handler", `unknown distribution "gaussian"`, "uniform(min, max)"}},
		{"distribution arity", "backends: [zset]\nproducers:\n  delay: uniform(1s)\n", 3,
			[]string{"producers.delay", "uniform takes 2 argument(s)"}},
		{"uniform reversed", "backends: [zset]\nproducers:\n  delay: uniform(2s, 1s)\n", 3,
			[]string{"min <= max"}},
		{"enum", "backends: [zset]\nclient: jedis\n", 2, []string{"client", `"jedis" is not one of go-redis, rueidis`}},
		{"share over 1", "backends: [zset]\nproducers:\n  delayed: 1.5\n", 3, []string{"producers.delayed", "out of range 0..1"}},
		{"list where one value", "backends: [zset]\nrepeats: [1, 2]\n", 2, []string{"repeats", "not a list"}},
		{"empty list", "backends: [zset]\nclient: []\n", 2, []string{"client", "an empty list"}},
		{"mapping as value", "backends: [zset]\nduration: {a: 1}\n", 2, []string{"duration", "expects a value"}},
		{"null value", "backends: [zset]\nwarmup:\n", 2, []string{"warmup", "needs a value"}},
		{"section not a mapping", "backends: [zset]\nworkers: 4\n", 2, []string{"workers", "must be a mapping"}},
		{"missing backends", "duration: 1s\n", 0, []string{"backends", "required"}},
		{"empty backends", "backends: []\n", 1, []string{"backends", "an empty list"}},
		{"duplicate key", "backends: [zset]\nduration: 1s\nduration: 2s\n", 0, []string{"duration"}},
		{"duplicate label", "backends: [zset, zset]\n", 1, []string{`label "zset" is used twice`}},
		{"url mode without url", "backends: [zset]\nredis:\n  mode: url\n", 3, []string{"redis.mode", "needs redis.url"}},
		{"url without url mode", "backends: [zset]\nredis:\n  url: redis://127.0.0.1:1\n", 3, []string{"redis.url", "set redis.mode: url"}},
		{"backoff max below base", "backends: [zset]\nstore:\n  backoff_base: 2s\n  backoff_max: 1s\n", 4, []string{"store.backoff_max", "below"}},
		{"heartbeat too slow", "backends: [zset]\nworkers:\n  heartbeat: true\n  lease: 1s\n  heartbeat_interval: 2s\n", 5,
			[]string{"workers.heartbeat_interval", "lease would lapse"}},
		{"not yaml", "backends: [zset\n", 0, []string{"bad.yaml", "not valid YAML"}},
		{"unclosed flow sequence on line 2", "name: x\nbackends: [zset\nduration: 1s\n", 2, []string{"bad.yaml:2:1", "not valid YAML"}},
		{"bad indent on line 4", "name: x\nworkers:\n  count: 3\n bad: 1\n", 4, []string{"bad.yaml:4:1", "not valid YAML"}},
		{"not a mapping", "- a\n- b\n", 1, []string{"must be a mapping"}},
		{"bad calibration", "backends: [zset]\ncalibration: sometimes\n", 2, []string{"calibration", "allowed: off, on"}},
		{"bad label", "backends:\n  - name: zset\n    label: my zset\n", 3, []string{"label", "letters, digits"}},
	}
	const end = "backends: [zset]\nduration: 1s\nwarmup: 500ms\nredis: {mode: embedded}\nfaults:\n"
	cases = append(cases, []struct {
		name string
		src  string
		line int
		want []string
	}{
		{"fault after the run's end", end + "  - {kind: redis_pause, at: [1s, 2s]}\n", 6,
			[]string{"bad.yaml:6:5", "faults[0].at", "2s is not before the run's end 1.5s (warmup 500ms + duration 1s)"}},
		{"repeating fault from after the end", end + "  - {kind: redis_pause, every: 1s, from: 1500ms}\n", 6,
			[]string{"faults[0].from", "run's end 1.5s"}},
		{"repeating fault until after the end", end + "  - {kind: redis_pause, every: 1s, until: 1m}\n", 6,
			[]string{"faults[0].until", "1m0s is not before the run's end 1.5s"}},
		{"duration of years", "backends: [zset]\nduration: 8760h\n", 2,
			[]string{"bad.yaml:2:11", "duration", "8760h0m0s is above the maximum 24h", "at most 24h"}},
		{"warmup of days", "backends: [zset]\nwarmup: 48h\n", 2, []string{"warmup", "above the maximum 1h"}},
		{"lease of weeks", "backends: [zset]\nworkers:\n  lease: 500h\n", 3, []string{"workers.lease", "above the maximum 1h"}},
		{"handler of years", "backends: [zset]\nworkers:\n  handler: uniform(1ms, 9000h)\n", 3,
			[]string{"workers.handler", "above the maximum 24h"}},
		{"fault duration of years", "backends: [zset]\nredis: {mode: embedded}\nfaults:\n  - {kind: redis_pause, at: 1s, duration: 9000h}\n", 4,
			[]string{"faults[0].duration", "above the maximum 24h"}},
		{"calibration of years", "backends: [zset]\ncalibration: 9000h\n", 2, []string{"calibration", "above the maximum 24h"}},
		{"drain shorter than the handler", "backends: [zset]\ndrain: 1s\nworkers:\n  handler: uniform(1s, 2s)\n", 2,
			[]string{"bad.yaml:2:8", "drain", "1s is shorter than the handler's longest run 2s", "allowed: a drain >= 2s"}},
		{"default drain shorter than a constant handler", "backends: [zset]\nworkers:\n  handler: 45s\n", 3,
			[]string{"drain", "30s is shorter than the handler's longest run 45s"}},
		{"job kinds' shares not summing to 1", "backends: [zset]\njobs:\n  - {name: a, share: 0.5}\n  - {name: b, share: 0.3}\n", 3,
			[]string{"bad.yaml:3:3", "jobs[].share", "sum to 0.8 (a 0.5, b 0.3)", "must sum to 1"}},
		{"an unknown tenant distribution", "backends: [zset]\njobs:\n  - {name: a, share: 1, tenants: \"pareto(10)\"}\n", 3,
			[]string{"jobs[0].tenants", `unknown tenant distribution "pareto"`, "allowed: uniform(N), zipf(N, s) or noisy(N, share)"}},
		{"a noisy tenant alone", "backends: [zset]\njobs:\n  - {name: a, share: 1, tenants: \"noisy(1, 0.5)\"}\n", 3,
			[]string{"jobs[0].tenants", "N >= 2"}},
		{"a priority instead of a queue", "backends: [zset]\njobs:\n  - {name: a, share: 1, priority: 3}\n", 3,
			[]string{"jobs[0].priority", "a priority is a queue's place in store.queues", "give the kind a queue"}},
		{"queues on a store without the capability", "backends: [zset, null]\nstore:\n  queues: \"high low\"\njobs:\n  - {name: a, share: 1, queue: low}\n", 3,
			[]string{"store.queues", "backend null (calibration) does not declare the queues capability"}},
		{"a policy no cell of the peer's takes", "backends: [bullmq]\nstore:\n  queues: \"high low\"\n  queue_policy: [weighted, round_robin]\n", 4,
			[]string{"store.queue_policy", "backend bullmq claims from its queues strict only, not weighted"}},
		{"a policy the peer's queues lack", "backends: [asynq]\nstore:\n  queues: \"high low\"\n  queue_policy: round_robin\n", 4,
			[]string{"store.queue_policy", "backend asynq claims from its queues strict or weighted only, not round_robin"}},
		{"a kind's queue the store lacks", "backends: [zset]\nstore:\n  queues: \"high low\"\njobs:\n  - {name: a, share: 1, queue: lo}\n", 5,
			[]string{"jobs[0].queue", `"lo" (did you mean "low"?) is not a queue of store.queues; allowed: high, low`}},
		{"a kind's queue on a one-queue store", "backends: [zset]\njobs:\n  - {name: a, share: 1, queue: low}\n", 3,
			[]string{"jobs[0].queue", "the store has one queue"}},
		{"one queue", "backends: [zset]\nstore:\n  queues: \"high\"\n", 3,
			[]string{"store.queues", "one queue is the store itself"}},
		{"a misspelt kind field", "backends: [zset]\njobs:\n  - {name: a, share: 1, handlr: 2ms}\n", 3,
			[]string{"jobs[0]", `unknown field "handlr" (did you mean "handler"?)`}},
		{"a bad kind handler", "backends: [zset]\njobs:\n  - {name: a, share: 1, handler: \"gamma(2ms)\"}\n", 3,
			[]string{"jobs[0].handler", `unknown distribution "gamma"`, "as workers.handler"}},
		{"an unknown failure class", "backends: [zset]\njobs:\n  - {name: a, share: 1, fail_class: retryable}\n", 3,
			[]string{"jobs[0].fail_class", "allowed: rate_limit, fatal"}},
		{"a kind without a share", "backends: [zset]\njobs:\n  - {name: a}\n", 3, []string{"jobs[0].share", "is required"}},
		{"overlapping failure windows", "backends: [zset]\nduration: 10s\nfailure_windows:\n  - {from: 1s, for: 3s, share: 0.3}\n  - {from: 2s, for: 1s, share: 0.3}\n", 5,
			[]string{"failure_windows[1]", "overlaps failure_windows[0]"}},
		{"a failure window past the window", "backends: [zset]\nduration: 10s\nfailure_windows:\n  - {from: 8s, for: 3s, share: 0.3}\n", 4,
			[]string{"failure_windows[0]", "ends at 11s, after the measured window (10s)"}},
		{"jobs beside a trace", "backends: [zset]\nproducers: {trace: ../../scenarios/trace-sample.csv}\njobs:\n  - {name: a, share: 1}\n", 4,
			[]string{"jobs", "give jobs: or producers.trace, not both"}},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatal("parsed; want an error")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *ConfigError", err, err)
			}
			if tc.line > 0 && ce.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", ce.Line, tc.line, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDrainWarning: a drain shorter than an unbounded handler
// distribution's 99.9th percentile is a warning, not an error.
func TestDrainWarning(t *testing.T) {
	for _, tc := range []struct {
		name, handler string
		warn          bool
	}{
		{"exponential tail past the drain", "exponential(1s)", true},
		{"normal tail past the drain", "normal(1s, 1s)", true},
		{"exponential within the drain", "exponential(10ms)", false},
		{"uniform within the drain", "uniform(1s, 2s)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseScenario("w.yaml", []byte("backends: [zset]\ndrain: 3s\nworkers:\n  handler: "+tc.handler+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(s.Warnings) > 0; got != tc.warn {
				t.Fatalf("warnings %q, want some: %v", s.Warnings, tc.warn)
			}
			if tc.warn && !strings.Contains(s.Warnings[0], "w.yaml: drain 3s is shorter than the handler's 99.9th percentile") {
				t.Errorf("warning %q", s.Warnings[0])
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	src := "backends: [zset]\nproducers:\n  rate: 100\n"
	s, err := ParseScenario("o.yaml", []byte(src),
		Override{"producers.rate", "500"}, Override{"workers.count", "[1, 2]"}, Override{"duration", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 2 || s.Cells[0].Base.Producers.Rate != 500 || s.Cells[1].Base.Workers.Count != 2 ||
		s.Cells[0].Base.Duration != 2*time.Second {
		t.Fatalf("cells = %+v", s.Cells)
	}
	for _, bad := range []struct {
		o    Override
		want string
	}{
		{Override{"producers.rte", "5"}, `--set producers.rte=5: producers: unknown field "rte"`},
		{Override{"producers.rate", "-1"}, "--set producers.rate=-1: producers.rate: -1 must be > 0"},
		{Override{"producers.rate.x", "1"}, `"producers.rate" is not a section`},
	} {
		_, err := ParseScenario("o.yaml", []byte(src), bad.o)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("override %v: error %v, want %q", bad.o, err, bad.want)
		}
	}
	if _, err := ParseOverride("novalue"); err == nil {
		t.Error("ParseOverride accepted a flag without '='")
	}
}

func TestSelectBackends(t *testing.T) {
	const src = "backends: [zset, {name: null, label: n2}, bullmq, {name: bullmq, label: bullmq-native}]\n"
	for _, tc := range []struct {
		sel  []string
		want string
	}{
		{[]string{"n2"}, "n2"},
		{[]string{"null"}, "n2"}, // no unlabelled null: every null entry
		{[]string{"bullmq"}, "bullmq"},
		{[]string{"bullmq-native"}, "bullmq-native"},
		{[]string{"bullmq", "bullmq-native"}, "bullmq bullmq-native"},
		{[]string{"stream"}, "stream"}, // not in the file: added
	} {
		s, err := ParseScenario("s.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SelectBackends(tc.sel); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range s.Cells[0].Backends {
			got = append(got, b.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("--backends %v selected %v; want %s", tc.sel, got, tc.want)
		}
	}
	s, _ := ParseScenario("s.yaml", []byte(src))
	if err := s.SelectBackends([]string{"kafka"}); err == nil || !strings.Contains(err.Error(), `unknown backend "kafka"`) {
		t.Fatalf("SelectBackends(kafka) = %v", err)
	}
}

// TestScenarioFiles parses every file in scenarios/ and scenarios/claims/.
func TestScenarioFiles(t *testing.T) {
	files, _ := filepath.Glob("../../scenarios/*.yaml")
	claims, _ := filepath.Glob("../../scenarios/claims/*.yaml")
	files = append(files, claims...)
	if len(files) == 0 {
		t.Fatal("no scenario files found")
	}
	for _, f := range files {
		if _, err := LoadScenario(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestReadmeDocumentsEveryField keeps scenarios/README.md in step with the schema.
func TestReadmeDocumentsEveryField(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range FieldDocs(registry.Builtin()) {
		if !strings.Contains(string(data), "`"+f[0]+"`") {
			t.Errorf("scenarios/README.md does not document `%s`", f[0])
		}
	}
}

func TestParseDist(t *testing.T) {
	for _, s := range []string{"1ms", "0", "constant(2ms)", "uniform(1ms, 2ms)", "exponential(1ms)", "normal(5ms, 1ms)"} {
		d, err := conditions.ParseDist(s)
		if err != nil {
			t.Errorf("conditions.ParseDist(%q): %v", s, err)
			continue
		}
		for i := 0; i < 100; i++ {
			u1, u2 := float64(i)/100, float64(99-i)/100
			if v := d.Sample(u1, u2); v < 0 {
				t.Errorf("%s sampled %v < 0", s, v)
			}
			if d.Kind == "uniform" {
				if v := d.Sample(u1, u2); v < d.A || v > d.B {
					t.Errorf("%s sampled %v outside", s, v)
				}
			}
		}
	}
	for _, s := range []string{"", "fast", "uniform(1ms", "poisson(1ms)", "uniform(-1ms, 1ms)", "exponential(1ms, 2ms)"} {
		if _, err := conditions.ParseDist(s); err == nil {
			t.Errorf("conditions.ParseDist(%q) accepted", s)
		}
	}
	// The exponential's sample mean is near its mean.
	d, _ := conditions.ParseDist("exponential(1ms)")
	r := rand.New(rand.NewPCG(1, 2))
	var sum time.Duration
	for i := 0; i < 20000; i++ {
		sum += d.Sample(r.Float64(), r.Float64())
	}
	if mean := sum / 20000; mean < 950*time.Microsecond || mean > 1050*time.Microsecond {
		t.Errorf("exponential(1ms) sample mean %v", mean)
	}
}

func TestMatrixZip(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		cells     int
		err       string
	}{
		{"zip", "matrix: zip\nbackends: [zset]\nworkers: {lease: [30m, 30s], recovery_mode: [seed, lease], count: 2}\n", 2, ""},
		{"cross", "backends: [zset]\nworkers: {lease: [30m, 30s], recovery_mode: [seed, lease]}\n", 4, ""},
		{"lengths differ", "matrix: zip\nbackends: [zset]\nworkers: {lease: [30m, 30s, 1m], recovery_mode: [seed, lease]}\n", 0, "matrix: zip needs every list of one length"},
		{"bad value", "matrix: diagonal\nbackends: [zset]\n", 0, "allowed: cross"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseOrErr(t, "z.yaml", tc.src, tc.err)
			if s == nil {
				return
			}
			if len(s.Cells) != tc.cells {
				t.Fatalf("cells = %d, want %d", len(s.Cells), tc.cells)
			}
			if tc.name == "zip" {
				c1, c2 := s.Cells[0].Base.Workers, s.Cells[1].Base.Workers
				if c1.Lease != 30*time.Minute || c1.RecoveryMode != "seed" || c2.Lease != 30*time.Second || c2.RecoveryMode != "lease" || c2.Count != 2 {
					t.Errorf("cells: %+v / %+v", c1, c2)
				}
			}
		})
	}
}

func TestSimulatedTimeFields(t *testing.T) {
	s, err := ParseScenario("t.yaml", []byte("time: {base: simulated, speed: 60}\nbackends: [zset]\nduration: 1h\nproducers: {rate: 2}\nworkers: {lease: 30m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0].Base
	r := c.RealTime()
	if r.Duration != time.Minute || r.Workers.Lease != 30*time.Second || r.Producers.Rate != 120 || c.Resolution() != 60*time.Millisecond {
		t.Errorf("real time: duration %v lease %v rate %v resolution %v", r.Duration, r.Workers.Lease, r.Producers.Rate, c.Resolution())
	}
	for _, tc := range []struct{ src, err string }{
		{"time: {speed: 60}\nbackends: [zset]\n", "needs time.base simulated"},
		{"time: {base: simulated, speed: 0.5}\nbackends: [zset]\n", "time.speed"},
		{"time: {base: simulated, speed: 10}\nbackends: [zset]\nworkers: {count: 2, processes: 1}\n", "cannot run on simulated time"},
	} {
		if _, err := ParseScenario("t.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err = %v, want %q", tc.src, err, tc.err)
		}
	}
}

func TestBackendOptionSweep(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		widths    []string // bucket's width per cell
		vary      string   // first cell's Vary
		err       string
	}{
		{"list", "backends: [zset, {name: bucket, options: {width: [50ms, 1s]}}]\n", []string{"50ms", "1s"}, "bucket.options.width=50ms", ""},
		{"one value", "backends: [{name: bucket, label: b, options: {width: 2s}}]\n", []string{"2s"}, "", ""},
		{"with a field", "backends: [{name: bucket, options: {width: [50ms, 1s]}}]\nproducers: {rate: [10, 20]}\n", []string{"50ms", "1s", "50ms", "1s"}, "producers.rate=10, bucket.options.width=50ms", ""},
		{"empty list", "backends: [{name: bucket, options: {width: []}}]\n", nil, "", "backends[0].options.width"},
		{"nested", "backends: [{name: bucket, options: {width: [[1s]]}}]\n", nil, "", "a value or a list of values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseOrErr(t, "o.yaml", tc.src, tc.err)
			if s == nil {
				return
			}
			if len(s.Cells) != len(tc.widths) {
				t.Fatalf("cells = %d, want %d", len(s.Cells), len(tc.widths))
			}
			for i, c := range s.Cells {
				b := c.Backends[len(c.Backends)-1]
				if b.Options["width"] != tc.widths[i] {
					t.Errorf("cell %d: width %q, want %q", i+1, b.Options["width"], tc.widths[i])
				}
			}
			if got := strings.Join(s.Cells[0].Vary, ", "); got != tc.vary {
				t.Errorf("vary = %q, want %q", got, tc.vary)
			}
		})
	}
}

// parseOrErr parses src; when wantErr is set it checks the error names it
// and returns nil.
func parseOrErr(t *testing.T, file, src, wantErr string) *Scenario {
	t.Helper()
	s, err := ParseScenario(file, []byte(src))
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReadmeListsEveryScenario: scenarios/README.md's table names every
// scenario file in scenarios/ (claims/ has its own list in docs/claims.md).
func TestReadmeListsEveryScenario(t *testing.T) {
	data, err := os.ReadFile("../../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios found: %v", err)
	}
	for _, f := range files {
		if name := filepath.Base(f); !strings.Contains(string(data), "`"+name+"`") {
			t.Errorf("scenarios/README.md does not list `%s`", name)
		}
	}
}

// TestFaultAtPhase: a fault timed into a phase (overload+1s) lands at the
// phase's start on the run's clock plus the offset, beside one given from
// the run's start; each cell places it after its own warm-up.
func TestFaultAtPhase(t *testing.T) {
	src := `backends: [zset]
warmup: [1s, 2s]
faults:
  - {kind: worker_crash, at: [overload+1s, 500ms, calm]}
phases:
  - {name: calm, duration: 2s, rate: 10}
  - {name: overload, duration: 3s, rate: 30}
`
	s, err := ParseScenario("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]time.Duration{{4 * time.Second, 500 * time.Millisecond, time.Second}, {5 * time.Second, 500 * time.Millisecond, 2 * time.Second}} {
		if got := s.Cells[i].Base.Faults[0].At; !slices.Equal(got, want) {
			t.Errorf("cell %d: at %v, want %v", i+1, got, want)
		}
	}
}

// TestTraceErrors: a bad trace, or one the scenario cannot replay, fails
// with the file, the line and the field.
func TestTraceErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.csv", "offset_s\n0.5\n1.5\n2.5\n")
	write("bad.csv", "offset_s,kind\n0.5,a\nlater,b\n")
	for _, tc := range []struct {
		name, src, file string
		line            int
		want            string
	}{
		{"malformed line", "backends: [zset]\nwarmup: 1s\nproducers: {trace: bad.csv}\n", "bad.csv", 3, "producers.trace column offset_s"},
		{"missing file", "backends: [zset]\nproducers: {trace: none.csv}\n", "s.yaml", 2, "cannot read the trace"},
		{"trace beside phases", "backends: [zset]\nproducers: {trace: good.csv}\nphases:\n  - {name: a, duration: 1s, rate: 5}\n", "s.yaml", 2, "give one of them"},
		{"batched", "backends: [zset]\nwarmup: 1s\nproducers: {trace: good.csv, batch: 4}\n", "s.yaml", 3, "each arrival at its own time"},
		{"past the trace", "backends: [zset]\nwarmup: 1s\nduration: 5s\nproducers: {trace: good.csv}\n", "s.yaml", 3, "trace_loop"},
		{"warm-up longer than the trace", "backends: [zset]\nwarmup: 5s\nproducers: {trace: good.csv}\n", "s.yaml", 2, "a warm-up shorter than the trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario(filepath.Join(dir, "s.yaml"), []byte(tc.src))
			var ce *ConfigError
			if !errors.As(err, &ce) || filepath.Base(ce.File) != tc.file || ce.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (%+v), want %s line %d and %q", err, ce, tc.file, tc.line, tc.want)
			}
		})
	}
	s, err := ParseScenario(filepath.Join(dir, "s.yaml"), []byte("backends: [zset]\nwarmup: 1s\nproducers: {trace: good.csv, trace_scale: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	// Two arrivals in the window (1.5 and 2.5s) of 2s, twice over.
	if c := s.Cells[0].Base; c.Duration != 2*time.Second || c.Producers.Rate != 2 || c.Producers.TraceData == nil {
		t.Errorf("duration %s rate %g trace %v", c.Duration, c.Producers.Rate, c.Producers.TraceData != nil)
	}
}

// TestPhaseShorthands: a first phase called warmup is the run's warm-up at
// its own rate; a phase called ramp ramps; a phase's workload overrides
// apply to its own jobs only.
// redis.maxmemory: 2x is twice the working set of the cell's own load.
func TestMaxMemoryTimesWorkingSet(t *testing.T) {
	src := `backends: [zset]
warmup: 2s
duration: 8s
redis: {maxmemory: 2x}
store: {retention: 1h}
producers: {rate: 1000, payload: 800, delayed: 0.5, delay: 4s}
`
	s, err := ParseScenario("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// 1000/s for 10s retained, plus 1000 x 0.5 x 4s waiting: 12,000 jobs of 2000 B.
	want := int64(2 * (conditions.WorkingSetBase + 12000*(800+conditions.WorkingSetPerJob)))
	if got := s.Cells[0].Base.Redis.MaxMemory; got != want {
		t.Errorf("maxmemory %d, want %d", got, want)
	}
}

func TestPhaseShorthands(t *testing.T) {
	src := `backends: [zset]
workers: {handler: 1ms}
phases:
  - {name: warmup, duration: 3s, rate: 50}
  - {name: steady, duration: 2s, rate: 100}
  - {name: ramp, duration: 4s, rate: 400}
  - {name: slow, duration: 2s, rate: 100, handler: 20ms, fail: 0.3, delayed: 0.5, delay: 2s, payload: 1KiB}
`
	s, err := ParseScenario("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cells[0].Base
	if c.Warmup != 3*time.Second || c.WarmupRate != 50 || len(c.Phases) != 3 || c.Duration != 8*time.Second {
		t.Fatalf("warm-up %s at %g/s, %d phases, duration %s", c.Warmup, c.WarmupRate, len(c.Phases), c.Duration)
	}
	if c.RateAt(time.Second) != 50 || !c.Phases[1].Ramp || c.RateAt(7*time.Second) != 250 {
		t.Errorf("rates %g, %g; ramp %v", c.RateAt(time.Second), c.RateAt(7*time.Second), c.Phases[1].Ramp)
	}
	w, base := c.WorkloadOf(2), c.WorkloadOf(0)
	if w.HandlerText != "20ms" || w.Fail != 0.3 || w.Delayed != 0.5 || w.Payload != 1024 || base.HandlerText != "1ms" || base.Fail != 0 {
		t.Errorf("slow's workload %+v, steady's %+v", w, base)
	}
	if c.JobName(2) != "bench@2" || c.JobName(0) != "bench" || conditions.PhaseOfName("bench@2") != 2 {
		t.Errorf("job names %q %q", c.JobName(2), c.JobName(0))
	}
	for _, bad := range []struct{ src, want string }{
		{"backends: [zset]\nphases:\n  - {name: a, duration: 1s, rate: 5}\n  - {name: warmup, duration: 1s, rate: 5}\n", "only the first phase"},
		{"backends: [zset]\nwarmup: 1s\nphases:\n  - {name: warmup, duration: 1s, rate: 5}\n  - {name: a, duration: 1s, rate: 5}\n", "given twice"},
		{"backends: [zset]\nphases:\n  - {name: a, duration: 1s, rate: 5, handler: fast}\n", "phases[0].handler"},
	} {
		if _, err := ParseScenario("p.yaml", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.src, err, bad.want)
		}
	}
}

// TestRecoveryModeSeedNeverRenews: workers.recovery_mode seed is seed
// 002's recovery, a timeout counted from StartedAt with no heartbeat
// (seed 002's RecoverStuckJobs compares StartedAtUnix with a timeout; no
// worker renews it), so a job longer than the lease runs twice; lease
// renews it. The flaw row flaw-seed002-timeout stands on this switch.
func TestRecoveryModeSeedNeverRenews(t *testing.T) {
	for _, tc := range []struct {
		mode      string
		heartbeat bool
	}{{"seed", false}, {"lease", true}} {
		s, err := ParseScenario("rm.yaml", []byte("backends: [zset]\nworkers:\n  recovery_mode: "+tc.mode+"\n  heartbeat: "+map[bool]string{true: "false", false: "true"}[tc.heartbeat]+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if hb := s.Cells[0].Base.Workers.Heartbeat; hb != tc.heartbeat {
			t.Errorf("recovery_mode %s: heartbeat %v, want %v whatever workers.heartbeat says", tc.mode, hb, tc.heartbeat)
		}
	}
}
