// Package conformance is the one behaviour suite every aebench backend, and
// any job store a user brings, runs against. It drives a jobstore.Store on
// real Redis (standalone and Cluster, through each rclient adapter) and
// checks the contract written in package jobstore: FIFO among equal RunAt,
// never before RunAt, fencing by lease token, retries with backoff and
// dead-lettering, exactly-once recovery under concurrent recoverers, atomic
// bulk enqueue, bad-input rejection, Stats, record retention, both record
// encodings, and behaviour while Redis is unreachable.
//
// A user with a store of their own runs every case from their own go test
// with one call; with the zero Config it spawns a private redis-server for
// the test (package redisserver) and stops it at the end:
//
//	func TestConformance(t *testing.T) {
//		conformance.RunStore(t, "mystore", conformance.Adapt(mystore.New), conformance.Config{})
//	}
//
// aebench's own test runs the full matrix with Run: backends x client
// libraries x targets, as subtests <backend>/<client>/<topology>/<Case>.
//
// Capabilities: each case lists the jobstore capabilities it needs, and a
// case (or a part of one) whose capability the store does not declare is
// skipped with a message naming it. A job store keeping the whole contract
// declares every core capability (jobstore.Capabilities.WithCore); a store
// that is not a job store in the usual sense (a reference floor without
// delayed jobs, a peer queue that cannot fence) declares what it keeps and
// runs the rest.
//
// Each case gets a fresh queue, a clock.Manual and small backoff settings.
// When the store implements jobstore.Mover the suite plays the mover: it
// calls Promote before every Claim (and before Stats).
//
// Leases: a store with jobstore.CapStoreClockLeases has its leases expired
// by advancing the manual clock; a store that judges idleness by Redis's
// clock gets short real leases and real sleeps as well, so the same cases
// run on both kinds.
//
// Encodings: every case whose outcome depends on the record layout runs
// with the default EncodingHash under its own name, and again with
// EncodingJSON as EncodingJSON/<Case>; the timing and transport cases run once.
//
// The cases live in one file per theme, each with its table: claim.go
// (claim order, due times, waiting claims), records.go (enqueue and
// records), leases.go (leases and recovery), admin.go (retries, cancel,
// stats, declared capabilities) and transport.go (Redis unreachable). Adding
// a case is one line in its theme's table plus its body.
//
// The suite pauses the target Redis in one case (RedisUnreachable), so it
// runs its subtests sequentially.
package conformance

import (
	"context"
	"testing"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Factory builds the store under test on a Redis client with the options the
// suite chose for a case (a fresh queue name, a manual clock, small backoff).
// A store that dials Redis itself can reach the target through a Target the
// caller started and passed in Config.Targets.
type Factory func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error)

// Backend is one store under test: its name and its constructor.
type Backend struct {
	Name string
	New  Factory
	// Findings are cases (by CaseNames name) the store is known to fail,
	// each with what it does instead: the case is skipped with that text,
	// so a store that is not a job store in the usual sense (a peer queue)
	// runs the whole suite and says, case by case, where and why it
	// departs from the contract. A name the suite does not have fails.
	Findings map[string]string
	// Options, when set, fixes what the store needs of its options after
	// each case has set its own (a store that keeps JSON records only sets
	// EncodingJSON, so the cases choose payloads JSON can hold).
	Options func(*jobstore.Options)
}

// Adapt turns a constructor that returns its concrete store type into a
// Factory, so each registration is one line:
//
//	{Name: "zset", New: conformance.Adapt(zset.New)}
func Adapt[S jobstore.Store](newStore func(context.Context, rclient.Client, jobstore.Options) (S, error)) Factory {
	return func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		s, err := newStore(ctx, c, o)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return s, nil
	}
}

// Target is a Redis topology to run against, named for the subtests
// ("single", "cluster").
type Target struct {
	Name  string
	Redis *redisserver.Redis
}

// Config says where RunStore runs the suite. The zero value spawns a private
// standalone redis-server and uses the go-redis adapter.
type Config struct {
	// Targets are the Redis servers to run on. When empty, RunStore spawns
	// a standalone redis-server (and, with Cluster, a Redis Cluster of
	// redisserver.DefaultMasters masters) for the test and stops it when
	// the test ends.
	Targets []Target
	// Cluster adds a spawned Redis Cluster target; only without Targets.
	Cluster bool
	// Clients are rclient library names (see rclient.Names); default
	// just rclient.GoRedis.
	Clients []string
	// Findings: see Backend.Findings.
	Findings map[string]string
}

// RunStore runs every case on one store, as subtests
// <name>/<client>/<topology>/<Case>. Cases needing a capability the store
// does not declare are skipped with a message naming it.
func RunStore(t *testing.T, name string, newStore Factory, cfg Config) {
	t.Helper()
	switch {
	case name == "":
		t.Fatal("conformance.RunStore: name is empty; give the store's name (it names the subtests)")
	case newStore == nil:
		t.Fatalf("conformance.RunStore(%q): the Factory is nil", name)
	case len(cfg.Targets) > 0 && cfg.Cluster:
		t.Fatalf("conformance.RunStore(%q): Config.Cluster spawns a cluster only when Config.Targets is empty; add the cluster to Targets instead", name)
	}
	targets := cfg.Targets
	if len(targets) == 0 {
		targets = spawnTargets(t, cfg.Cluster)
	}
	clients := cfg.Clients
	if len(clients) == 0 {
		clients = []string{rclient.GoRedis}
	}
	Run(t, []Backend{{Name: name, New: newStore, Findings: cfg.Findings}}, targets, clients)
}

// spawnTargets starts the servers RunStore uses when none are given, and
// stops them when the test ends.
func spawnTargets(t *testing.T, cluster bool) []Target {
	t.Helper()
	want := []Target{{Name: "single"}}
	modes := []redisserver.Mode{redisserver.ModeSpawn}
	if cluster {
		want = append(want, Target{Name: "cluster"})
		modes = append(modes, redisserver.ModeCluster)
	}
	for i := range want {
		r, err := redisserver.Start(t.Context(), redisserver.Options{Mode: modes[i]})
		if err != nil {
			t.Fatalf("conformance: starting a %s Redis for the suite: %v (or pass a running one in Config.Targets)", want[i].Name, err)
		}
		t.Cleanup(func() {
			if err := r.Close(); err != nil {
				t.Errorf("conformance: stopping the %s Redis: %v", want[i].Name, err)
			}
		})
		want[i].Redis = r
	}
	return want
}

// Run runs every case for every backend, client library and target, as
// subtests named <backend>/<client>/<topology>/<Case>. clients are names
// rclient.New accepts ("go-redis", "rueidis").
func Run(t *testing.T, backends []Backend, targets []Target, clients []string) {
	t.Helper()
	if len(backends) == 0 || len(targets) == 0 || len(clients) == 0 {
		t.Fatalf("conformance.Run: need at least one backend (%d), target (%d) and client (%d)", len(backends), len(targets), len(clients))
	}
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			for _, cn := range clients {
				t.Run(cn, func(t *testing.T) {
					for _, tg := range targets {
						t.Run(tg.Name, func(t *testing.T) { runTarget(t, b, cn, tg) })
					}
				})
			}
		})
	}
}

// runTarget runs the suite for one backend, client library and target.
func runTarget(t *testing.T, b Backend, client string, tg Target) {
	if tg.Redis == nil {
		t.Fatalf("target %q has no Redis", tg.Name)
	}
	if b.New == nil {
		t.Fatalf("backend %q has no constructor (Backend.New is nil)", b.Name)
	}
	c, err := rclient.New(client, tg.Redis.ClientOptions())
	if err != nil {
		t.Fatalf("rclient.New(%q) on %s: %v", client, tg.Name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	known := map[string]bool{}
	for _, tc := range suite() {
		known[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			if f, ok := b.Findings[tc.name]; ok {
				t.Skipf("finding about %s: %s", b.Name, f)
			}
			runCase(t, b, c, tg, tc, nil)
		})
	}
	for name := range b.Findings {
		if !known[name] {
			t.Errorf("%s: a finding names case %q, which the suite does not have (see CaseNames)", b.Name, name)
		}
	}
}

// CaseNames lists the suite's cases in the order they run.
func CaseNames() []string {
	cases := suite()
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	return names
}
