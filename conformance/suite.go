package conformance

import (
	"time"

	"github.com/aebench/aebench/jobstore"
)

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
	name string
	// needs are the capabilities the whole case depends on; a store that
	// lacks one skips the case, naming it. Parts of a case that need more
	// gate themselves with env.part.
	needs []jobstore.Capability
	opts  func(*jobstore.Options)
	fn    func(e *env)
	// noEncoding marks cases whose outcome does not depend on the record
	// encoding; EncodingJSON reruns every other case with EncodingJSON.
	noEncoding bool
}

// suite is the case table, in running order: one table per theme file.
// (A function, not a variable: EncodingJSON reruns it.) RedisUnreachable,
// which pauses the target, runs last.
func suite() []testCase {
	var all []testCase
	for _, theme := range [][]testCase{claimCases(), recordCases(), leaseCases(), adminCases(), queueCases(), transportCases()} {
		all = append(all, theme...)
	}
	return all
}

// needs spells a case's capability list in its table line.
func needs(cs ...jobstore.Capability) []jobstore.Capability { return cs }

func useJSON(o *jobstore.Options) { o.Encoding = jobstore.EncodingJSON }

const maxPayload = 1024

func smallPayload(o *jobstore.Options) { o.MaxPayload = maxPayload }
