package probe_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/harness/probe"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/redisserver/redistest"
)

// runProbe probes backend on a fresh Redis (no callgrind: commands,
// scripts, stored bytes and allocations only).
func runProbe(t *testing.T, backend string, opts map[string]string) *summary.PathProbe {
	t.Helper()
	ctx := context.Background()
	c, r := redistest.Client(t)
	be, err := registry.Lookup(backend)
	if err != nil {
		t.Fatal(err)
	}
	counting := probe.NewCounting(c)
	st, err := be.Build(ctx, counting, jobstore.Options{Queue: "probe", PollInterval: 100 * time.Millisecond}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return probe.Run(ctx, probe.Options{Store: st, Client: counting, Addrs: r.Addrs, Auth: r.Auth(), Jobs: 60})
}

// TestProbePaths: every strategy gets every path it has, each naming the
// scripts it ran, and the counted figures repeat exactly on a fresh Redis.
func TestProbePaths(t *testing.T) {
	for _, b := range []string{"zset", "stream", "bucket", "dual"} {
		t.Run(b, func(t *testing.T) {
			p1, p2 := runProbe(t, b, nil), runProbe(t, b, nil)
			if p1.Error != "" {
				t.Fatalf("probe: %s", p1.Error)
			}
			for _, path := range []string{"enqueue", "pop", "complete", "handoff", "fail", "recover", "delayed"} {
				pc, ok := p1.Paths[path]
				if !ok || pc.Jobs == 0 || pc.Commands == 0 || len(pc.Scripts) == 0 {
					t.Errorf("path %s: %+v (present %v)", path, pc, ok)
				}
			}
			if p1.RecordBytesPerJob != p2.RecordBytesPerJob || p1.RecordBytesPerJob == 0 || p1.StoredBytesPerJob <= p1.RecordBytesPerJob {
				t.Errorf("record bytes a job: %v then %v (all keys: %v)", p1.RecordBytesPerJob, p2.RecordBytesPerJob, p1.StoredBytesPerJob)
			}
			if p1.ClientAllocsPerClaimedJob == 0 {
				t.Errorf("no allocations counted")
			}
			if os.Getenv("PROBE_DEBUG") != "" {
				t.Logf("%+v\n%+v", p1, p2)
			}
		})
	}
}

// TestProbePollingStore: a store whose claims poll has no hand-off; the
// probe leaves that path out and runs the others.
func TestProbePollingStore(t *testing.T) {
	p := runProbe(t, "zset", map[string]string{"wait": "poll"})
	if p.Error != "" {
		t.Fatalf("probe: %s", p.Error)
	}
	if _, ok := p.Paths["handoff"]; ok {
		t.Errorf("a polling store got a hand-off path: %+v", p.Paths["handoff"])
	}
	for _, path := range []string{"pop", "complete", "fail", "recover", "delayed"} {
		if _, ok := p.Paths[path]; !ok {
			t.Errorf("path %s missing", path)
		}
	}
}
