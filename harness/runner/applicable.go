package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aebench/aebench/backends/registry"
	"github.com/aebench/aebench/faults"
	"github.com/aebench/aebench/harness/conditions"
	"github.com/aebench/aebench/jobstore"
)

// need is one thing a run's scenario makes the store do, the capability
// that covers it, and the scenario fields that ask for it.
type need struct {
	cap jobstore.Capability
	why string
	// recovery: a backend that recovers crashed workers' jobs on its own
	// (jobstore.CapSelfRecovery) meets it without declaring cap.
	recovery bool
}

// needs lists what cfg makes a store do beyond enqueue, claim and
// complete: the harness calls Fail for handler failures, Extend for
// heartbeats, relies on Recover for crashed workers, and stores RunAt
// after now for delayed jobs.
func needs(cfg conditions.Config) []need {
	var out []need
	if cfg.Producers.Delayed > 0 {
		out = append(out, need{cap: jobstore.CapDelayedJobs, why: fmt.Sprintf("delayed jobs (producers.delayed %g)", cfg.Producers.Delayed)})
	}
	if cfg.Workers.Fail > 0 {
		out = append(out, need{cap: jobstore.CapRetries, why: fmt.Sprintf("handler failures and retries (workers.fail %g)", cfg.Workers.Fail)})
	}
	if cfg.Simulated() {
		out = append(out, need{cap: jobstore.CapStoreClock, why: fmt.Sprintf("simulated time (time.speed %g)", cfg.Speed())})
	}
	if cfg.Encoding == string(jobstore.EncodingJSON) {
		out = append(out, need{cap: jobstore.CapRecordEncodings, why: "the json record encoding (encoding json)"})
	}
	if kinds := recoveryFaults(cfg.Faults); len(kinds) > 0 {
		out = append(out, need{cap: jobstore.CapLeaseRecovery, recovery: true,
			why: "recovery of jobs a fault leaves claimed (faults " + strings.Join(kinds, ", ") + ")"})
	}
	if hb := heartbeatEvery(cfg.Workers); hb > 0 {
		if longest, _ := cfg.Workers.Handler.Bound(); longest > hb {
			out = append(out, need{cap: jobstore.CapLeaseRecovery, recovery: true,
				why: fmt.Sprintf("lease renewal (workers.heartbeat every %s, handler up to %s)", hb, longest)})
		}
	}
	return out
}

// heartbeatEvery is how often the workers extend a lease, or 0 when they
// do not (conditions.WorkerConfig.HeartbeatEvery).
func heartbeatEvery(wc conditions.WorkerConfig) time.Duration { return wc.HeartbeatEvery() }

// recoveryFaults lists the fault kinds of fs that can leave a job claimed
// by nobody (a crashed worker, a lost acknowledgement): all but added
// network latency, which only slows calls down.
func recoveryFaults(fs []faults.Fault) []string {
	seen := map[string]bool{}
	for _, f := range fs {
		if !f.Descriptor().SlowsOnly {
			seen[string(f.Kind)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// notApplicable says why a run of cfg on backend be, whose store declares
// caps, would measure what the backend does not do (and so fail for want
// of it, not for a fault of its own), or "" when it applies. A seed
// variant always applies: it is run to show what its missing capability
// costs (the ledger counts its losses as expected for the variant). A job
// system run through a driver (registry.Backend.Driver) meets every fault
// with its own recovery: what it loses beyond what its driver declares
// fails the run, which is the finding.
func notApplicable(be registry.Backend, caps jobstore.Capabilities, cfg conditions.Config) string {
	if caps.Has(jobstore.CapSeedVariant) {
		return ""
	}
	var missing []string
	for _, n := range needs(cfg) {
		if caps.Has(n.cap) || n.recovery && (be.Caps.Has(jobstore.CapSelfRecovery) || caps.Has(jobstore.CapSelfRecovery) || be.Driver != nil || declaresLoss(be, cfg.Faults)) {
			continue
		}
		missing = append(missing, fmt.Sprintf("%s needs %s", n.why, n.cap))
	}
	if len(missing) == 0 {
		return ""
	}
	return strings.Join(missing, "; ") + ", which " + be.Name + " does not declare"
}

// declaresLoss: every fault of fs that needs recovery is one under which
// be declares its loss (registry.Backend.Loses), so a run shows that
// documented loss instead of failing for want of recovery.
func declaresLoss(be registry.Backend, fs []faults.Fault) bool {
	kinds := recoveryFaults(fs)
	if len(kinds) == 0 || len(be.Loses) == 0 {
		return false
	}
	for _, k := range kinds {
		if !slices.Contains(be.Loses, k) {
			return false
		}
	}
	return true
}
