// Package conformance is the one behaviour suite every aebench backend
// registers into. It drives a jobstore.Store against real Redis (standalone
// and Cluster, through each rclient adapter) and checks the contract written
// in package jobstore: FIFO among equal RunAt, never before RunAt, fencing by
// lease token, retries with backoff and dead-lettering, exactly-once recovery
// under concurrent recoverers, atomic bulk enqueue, bad-input rejection, Stats,
// record retention, both record encodings, and behaviour while Redis is
// unreachable.
//
// A backend's test calls Run with a Backend entry; Run makes one subtest per
// backend/client/topology/case. Each case gets a fresh queue, a clock.Manual
// and small backoff settings. Cases that need a capability the backend does
// not declare are skipped with a message naming the capability. When the
// store implements jobstore.Mover the suite plays the mover: it calls Promote
// before every Claim (and before Stats).
//
// Leases: a backend with jobstore.CapStoreClockLeases has its leases expired
// by advancing the manual clock; a backend that judges idleness by Redis's
// clock gets short real leases and real sleeps as well, so the same cases run
// on both kinds.
//
// Encodings: every case whose outcome depends on the record layout runs
// with the default EncodingHash under its own name, and again with
// EncodingJSON as EncodingJSON/<Case>; the timing and transport cases run once.
//
// Run pauses the shared Redis in one case (RedisUnreachable), so it runs its
// subtests sequentially.
package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/aebench/aebench/jobstore"
	"github.com/aebench/aebench/rclient"
	"github.com/aebench/aebench/redisserver"
)

// Backend is one strategy under test: its name and its constructor.
type Backend struct {
	Name string
	New  func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error)
}

// Adapt turns a backend constructor that returns its concrete store type
// into Backend.New's signature, so each registration is one line:
//
//	{Name: "zset", New: conformance.Adapt(zset.New)}
func Adapt[S jobstore.Store](newStore func(context.Context, rclient.Client, jobstore.Options) (S, error)) func(context.Context, rclient.Client, jobstore.Options) (jobstore.Store, error) {
	return func(ctx context.Context, c rclient.Client, o jobstore.Options) (jobstore.Store, error) {
		s, err := newStore(ctx, c, o)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return s, nil
	}
}

// Target is a Redis topology to run against: "single" or "cluster".
type Target struct {
	Name  string
	Redis *redisserver.Redis
}

// Timing knobs.
const (
	// realLease is the lease of cases that let it expire, on backends that
	// judge idleness by Redis's clock (real time).
	realLease = 200 * time.Millisecond
	// clockLease is the lease of cases that let it expire on the manual clock.
	clockLease = 30 * time.Second
	// holdLease is a lease that must not expire during a case.
	holdLease = 10 * time.Minute
	// caseTimeout bounds every case.
	caseTimeout = 30 * time.Second
	// backoffBase and backoffMax are the suite's default Options.Backoff.
	backoffBase = time.Second
	backoffMax  = 8 * time.Second
)

// testCase is one behaviour: the capabilities it needs, options it changes
// from the suite's defaults, and its body.
type testCase struct {
	name  string
	needs []jobstore.Capability
	opts  func(*jobstore.Options)
	fn    func(e *env)
	// noEncoding marks cases whose outcome does not depend on the record
	// encoding; EncodingJSON reruns every other case with EncodingJSON.
	noEncoding bool
}

// suite is the case table, in running order. (A function, not a variable:
// EncodingJSON reruns it.)
func suite() []testCase {
	return []testCase{
		{name: "Capabilities", noEncoding: true, fn: caseCapabilities},
		{name: "FIFOEqualRunAt", needs: []jobstore.Capability{jobstore.CapStrictFIFO}, fn: caseFIFOEqualRunAt},
		{name: "NeverBeforeRunAt", fn: caseNeverBeforeRunAt},
		{name: "ConcurrentClaimers", fn: caseConcurrentClaimers},
		{name: "BulkEnqueue", opts: smallPayload, fn: caseBulkEnqueue},
		{name: "LeaseExpiryRecover", fn: caseLeaseExpiryRecover},
		{name: "HeartbeatPreventsRecovery", fn: caseHeartbeatPreventsRecovery},
		{name: "ExpiredLeaseStillCompletes", fn: caseExpiredLeaseStillCompletes},
		{name: "StaleCompleteAfterRecovery", fn: caseStaleCompleteAfterRecovery},
		{name: "FailBackoffRetriesDeadLetter", fn: caseFailBackoffRetriesDeadLetter},
		{name: "FailBackoffJitter", opts: func(o *jobstore.Options) { o.Backoff.Jitter = 0.5; o.Seed = 7 }, fn: caseFailBackoffJitter},
		{name: "ConcurrentRecoverers", fn: caseConcurrentRecoverers},
		{name: "RecoverDeadLettersPastLimit", fn: caseRecoverDeadLettersPastLimit},
		{name: "Cancel", fn: caseCancel},
		{name: "StatsAgree", fn: caseStatsAgree},
		{name: "DuplicateID", fn: caseDuplicateID},
		{name: "BadInput", opts: smallPayload, fn: caseBadInput},
		{name: "GetRoundTrip", fn: caseGetRoundTrip},
		{name: "CompletedExpires", opts: func(o *jobstore.Options) { o.Retention = retention }, fn: caseCompletedExpires},
		{name: "EncodingJSON", opts: useJSON, noEncoding: true, fn: caseEncodingJSON},
		{name: "BlockingClaimWakes", needs: []jobstore.Capability{jobstore.CapBlockingClaim}, noEncoding: true, fn: caseBlockingClaimWakes},
		{name: "ClaimWaitPolls", noEncoding: true, fn: caseClaimWaitPolls},
		{name: "RedisUnreachable", noEncoding: true, fn: caseRedisUnreachable},
	}
}

func useJSON(o *jobstore.Options) { o.Encoding = jobstore.EncodingJSON }

const maxPayload = 1024

func smallPayload(o *jobstore.Options) { o.MaxPayload = maxPayload }

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
						t.Run(tg.Name, func(t *testing.T) {
							if tg.Redis == nil {
								t.Fatalf("target %q has no Redis", tg.Name)
							}
							c, err := rclient.New(cn, tg.Redis.ClientOptions())
							if err != nil {
								t.Fatalf("rclient.New(%q) on %s: %v", cn, tg.Name, err)
							}
							t.Cleanup(func() { _ = c.Close() })
							for _, tc := range suite() {
								t.Run(tc.name, func(t *testing.T) { runCase(t, b, c, tg, tc, nil) })
							}
						})
					}
				})
			}
		})
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
