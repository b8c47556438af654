package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The outcomes of one rule of `aebench drivers check`.
const (
	CheckPass     = "pass"
	CheckFail     = "FAIL"
	CheckDeclared = "declared" // the driver declared it does not, and it did not
)

// CheckResult is one rule's outcome: its name (docs/drivers.md, "Checking
// a driver"), pass, FAIL or declared, and what was seen.
type CheckResult struct {
	Rule   string `json:"rule"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// The check's jobs: due ones, a delayed one, one that fails its first
// attempt, and a long one a SIGKILL catches. Handler plans are in
// microseconds (docs/drivers.md, Producer requests).
var checkDue = []string{"k-due-0", "k-due-1", "k-due-2", "k-due-3"}

const (
	checkDelayed  = "k-delayed"
	checkRetry    = "k-retry"
	checkKill     = "k-kill"
	checkNone     = "k-none"
	checkDelay    = 2 * time.Second
	checkLease    = 2 * time.Second
	checkKillHold = 3 * time.Second
)

// checker holds one check's state.
type checker struct {
	spec    Spec
	cfg     Config
	hello   Hello
	res     []CheckResult
	client  *checkProc
	enqAt   time.Time
	delayAt time.Time
	events  map[string][]checkEvent // worker events by job id, in order
	strays  []string                // events for ids never enqueued
}

// Check runs a driver through the protocol's conformance on the Redis at
// addr: its hello and declarations, enqueue acks and refusals, inspect
// and stats, worker events with the system's own timestamps, a delayed
// job, a retry, a SIGKILL of its worker against what it declares, and a
// clean shutdown. Each rule passes, fails, or is declared (the driver
// said it does not, and it did not). It takes about half a minute, more
// for a system whose retries wait long (Sidekiq's jitter).
func Check(ctx context.Context, spec Spec, addr RedisAddr) []CheckResult {
	c := &checker{spec: spec, events: map[string][]checkEvent{},
		cfg: Config{Redis: addr, Queue: "aebench-check-" + spec.Name, Concurrency: 2, LeaseMs: checkLease.Milliseconds(),
			BackoffMs: 500, RetentionMs: time.Hour.Milliseconds(), EventsAtOnce: true}}
	if !c.checkHello(ctx) {
		return c.res
	}
	var err error
	if c.client, err = c.start(ctx, "client"); err != nil {
		return c.res
	}
	c.enqueue()
	c.inspectQueued()
	w, err := c.start(ctx, "worker")
	if err != nil {
		c.client.closeWithin(10 * time.Second)
		return c.res
	}
	c.runJobs(w)
	c.inspectFinished()
	w = c.killWorker(ctx, w)
	if w != nil {
		c.add("shutdown-worker", w.closeWithin(5*time.Second), "a worker whose stdin closed exited within 5 s")
	}
	c.add("shutdown-client", c.client.closeWithin(10*time.Second), "the client exited within 10 s of its stdin closing")
	return c.res
}

func (c *checker) add(rule string, ok bool, detail string) {
	st := CheckPass
	if !ok {
		st = CheckFail
	}
	c.res = append(c.res, CheckResult{Rule: rule, Status: st, Detail: detail})
}

func (c *checker) declared(rule, detail string) {
	c.res = append(c.res, CheckResult{Rule: rule, Status: CheckDeclared, Detail: detail})
}

// checkHello runs the hello role and holds its declarations to the
// protocol: every field a run relies on is there.
func (c *checker) checkHello(ctx context.Context) bool {
	h, err := ProbeHello(ctx, c.spec)
	if err != nil {
		c.add("hello", false, err.Error())
		return false
	}
	c.hello = h
	var missing []string
	for _, f := range []struct{ name, v string }{{"driver", h.Driver}, {"driver_version", h.DriverVersion}, {"system", h.System},
		{"system_version", h.SystemVersion}, {"runtime", h.Runtime}, {"caps.recovery", h.Caps.Recovery}, {"guarantees", h.Guarantees}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		c.add("hello", false, "the hello lacks "+strings.Join(missing, ", "))
		return true
	}
	c.add("hello", true, fmt.Sprintf("protocol %d, %s %s on %s; recovery %q, loses %v", h.Protocol, h.System, h.SystemVersion, h.Runtime, h.Caps.Recovery, h.Loses))
	return true
}

// start starts a role and holds it to its first two lines: hello, ready.
func (c *checker) start(ctx context.Context, role string) (*checkProc, error) {
	p, err := startCheckProc(ctx, c.spec, c.cfg, role)
	if err == nil {
		l1, _ := p.next(30 * time.Second)
		l2, _ := p.next(30 * time.Second)
		var a, b checkReply
		if json.Unmarshal(l1, &a) != nil || a.E != "hello" || json.Unmarshal(l2, &b) != nil || b.E != "ready" {
			err = fmt.Errorf("its first lines were %q and %q, where a hello and then {\"e\":\"ready\"} are due%s", l1, l2, p.stderrTail())
			p.kill()
		}
	}
	if err != nil {
		c.add(role+"-ready", false, err.Error())
		return nil, err
	}
	c.add(role+"-ready", true, "hello, then ready")
	return p, nil
}

// call sends requests and collects one reply per seq within d; a reply
// whose seq matches no request is reported in bad.
func (c *checker) call(d time.Duration, reqs ...map[string]any) (got map[int64][]byte, bad []string) {
	want := map[int64]bool{}
	for _, r := range reqs {
		want[r["seq"].(int64)] = true
		if err := c.client.send(r); err != nil {
			return nil, []string{"write: " + err.Error()}
		}
	}
	got = map[int64][]byte{}
	deadline := time.Now().Add(d)
	// Every request has been answered once as many replies came as were
	// sent, good or not: a driver that answers under wrong seqs fails at
	// once rather than after d.
	for len(got)+len(bad) < len(want) && time.Now().Before(deadline) {
		l, ok := c.client.next(time.Until(deadline))
		if !ok {
			break
		}
		var r checkReply
		switch {
		case json.Unmarshal(l, &r) != nil || r.Seq == nil:
			bad = append(bad, fmt.Sprintf("%q has no seq", l))
		case !want[*r.Seq]:
			bad = append(bad, fmt.Sprintf("%q: seq %d matches no request (sent %v)", l, *r.Seq, keys(want)))
		default:
			got[*r.Seq] = l
		}
	}
	return got, bad
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
