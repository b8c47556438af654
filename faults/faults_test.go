package faults

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/aebench/aebench/rclient"
)

func parse(t *testing.T, src string) ([]Fault, error) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return Parse(doc.Content[0])
}

func TestParseAndPlan(t *testing.T) {
	fs, err := parse(t, `
- {kind: worker_crash, point: random, every: 1s}
- {kind: redis_pause, at: [2s, 500ms]}
- {kind: net_latency, at: 1s, latency: 20ms, jitter: 5ms}
`)
	if err != nil {
		t.Fatal(err)
	}
	if fs[0].ReplaceAfter != DefaultReplaceAfter || fs[1].Duration != DefaultDuration || fs[2].Latency != 20*time.Millisecond {
		t.Fatalf("defaults not set: %+v", fs)
	}
	a, b := Plan(fs, 7, 10*time.Second), Plan(fs, 7, 10*time.Second)
	if len(a) < 8 || len(a) != len(b) {
		t.Fatalf("plan of %d events, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].At != b[i].At || a[i].Point != b[i].Point {
			t.Fatalf("same seed, different plans at %d: %+v vs %+v", i, a[i], b[i])
		}
		if i > 0 && a[i].At < a[i-1].At {
			t.Fatal("plan not in time order")
		}
		if a[i].Fault.Kind == WorkerCrash && a[i].Point == Random {
			t.Fatal("random crash point not resolved")
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"- {kind: worker_crash, at: 1s, duration: 2s}", "has no duration"},
		{"- {kind: net_reset, at: 1s, point: in_handler}", "takes no crash point"},
		{"- {kind: net_latency, at: 1s, latency: 10ms, jitter: 20ms}", "above latency"},
		{"- {kind: redis_restart, at: 1s, every: 2s}", "not both"},
		{"- {kind: redis_restart, at: 3 secs}", "not a duration"},
		{"- {kind: redis_restart, at: 1s, color: red}", "unknown field"},
	} {
		_, err := parse(t, tc.src)
		var fe *Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) || fe.Line != 1 {
			t.Errorf("%s: %v, want %q on line 1", tc.src, err, tc.want)
		}
	}
}

type countClient struct {
	rclient.Client
	sent int
}

func (c *countClient) Do(context.Context, rclient.Command) (any, error) { c.sent++; return nil, nil }
func (c *countClient) Run(context.Context, *rclient.Script, []string, []string) (any, error) {
	c.sent++
	return nil, nil
}

// TestCrashClient: an armed crash lets the read through and refuses the
// script, once.
func TestCrashClient(t *testing.T) {
	inner := &countClient{}
	c := NewCrashClient(inner)
	ctx := context.Background()
	c.Begin()
	if _, err := c.Do(ctx, rclient.Command{}); err != nil {
		t.Fatal(err)
	}
	c.Arm(1)
	c.Begin()
	if _, err := c.Do(ctx, rclient.Command{}); err != nil {
		t.Fatal("the read step must pass")
	}
	if _, err := c.Run(ctx, nil, nil, nil); !errors.Is(err, ErrCrashed) {
		t.Fatalf("script step: %v, want ErrCrashed", err)
	}
	if _, err := c.Run(ctx, nil, nil, nil); err != nil || c.Armed() || inner.sent != 3 {
		t.Fatalf("after the crash: %v armed %v sent %d", err, c.Armed(), inner.sent)
	}
}

// TestProxy: bytes pass, a latency toxic delays them, a reset toxic breaks
// the connection, and a non-loopback upstream is refused.
func TestProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					_, _ = c.Write([]byte(line))
				}
			}()
		}
	}()
	if _, err := NewProxy("10.1.2.3:6379"); err == nil {
		t.Fatal("a non-loopback upstream was accepted")
	}
	p, err := NewProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	echo := func() (time.Duration, error) {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		t0 := time.Now()
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return 0, err
		}
		_, err = bufio.NewReader(c).ReadString('\n')
		return time.Since(t0), err
	}
	if _, err := echo(); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(Fault{Kind: NetLatency, Latency: 150 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if d, err := echo(); err != nil || d < 140*time.Millisecond {
		t.Fatalf("with latency: %v %v", d, err)
	}
	if err := p.Clear(); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(Fault{Kind: NetReset}); err != nil {
		t.Fatal(err)
	}
	if _, err := echo(); err == nil {
		t.Fatal("a reset toxic let a reply through")
	}
	_ = p.Clear()
	if _, err := echo(); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
}

// TestTrackerRefault: a job caught by a second fault between its re-claim
// and its handler start ends the first fault's recovery at that claim; its
// next start ends the second's.
func TestTrackerRefault(t *testing.T) {
	t0 := time.Now()
	tr := NewTracker(t0)
	r1 := tr.Fault(Event{Index: 1, Fault: Fault{Kind: WorkerCrash}}, "w1", t0, []Affected{{ID: "x", ClaimedAt: t0.Add(-100 * time.Millisecond), Started: true}})
	r2 := tr.Fault(Event{Index: 2, Fault: Fault{Kind: WorkerCrash}}, "w2", t0.Add(2*time.Second), []Affected{{ID: "x", ClaimedAt: t0.Add(1600 * time.Millisecond)}})
	tr.Started("x", t0.Add(3500*time.Millisecond))
	sum, h := tr.Finish(func(string) Outcome { return Outcome{} })
	if r1.Restarted != 1 || r1.RecoveryMaxNs != int64(1600*time.Millisecond) {
		t.Errorf("first fault: restarted %d, recovery max %v; want 1 and 1.6s", r1.Restarted, time.Duration(r1.RecoveryMaxNs))
	}
	if r2.Restarted != 1 || r2.RecoveryMaxNs != int64(1500*time.Millisecond) || r2.Duplicates != 1 {
		t.Errorf("second fault: restarted %d, recovery max %v, duplicates %d; want 1, 1.5s, 1 (the first run had started)",
			r2.Restarted, time.Duration(r2.RecoveryMaxNs), r2.Duplicates)
	}
	if h.TotalCount() != 2 || sum.Restarted != 2 {
		t.Errorf("histogram %d samples, restarted %d; want 2 and 2", h.TotalCount(), sum.Restarted)
	}
}

// TestDescriptors: every kind parses from its minimal entry, with the
// defaults its descriptor promises, and refuses a field it does not take.
func TestDescriptors(t *testing.T) {
	for _, d := range Descriptors() {
		t.Run(string(d.Kind), func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte("- {kind: "+string(d.Kind)+", at: 1s}"), &n); err != nil {
				t.Fatal(err)
			}
			fs, err := Parse(n.Content[0])
			if err != nil {
				t.Fatalf("minimal entry: %v", err)
			}
			f := fs[0]
			if (d.Points != nil) != (f.Point != "") || (d.Replace != (f.ReplaceAfter > 0)) || (d.Duration != (f.Duration > 0)) || (d.Latency != (f.Latency > 0)) {
				t.Errorf("defaults %+v do not follow the descriptor %+v", f, d)
			}
			extra := "latency: 10ms"
			if d.Latency {
				extra = "steps: 2"
			}
			if err := yaml.Unmarshal([]byte("- {kind: "+string(d.Kind)+", at: 1s, "+extra+"}"), &n); err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(n.Content[0]); err == nil {
				t.Errorf("%s accepted %s", d.Kind, extra)
			}
		})
	}
}
