package zset

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
)

// Scripts this file calls (lua/<name>.lua).
var (
	scriptSeed002Recover = base.NewScript("seed002_recover")
)

// Seed002 is a SEED VARIANT, not a job store to use: seed 002's recovery
// script (seed002_recover.lua), which declares no keys, SCANs every key in
// Redis for job records and builds the names of the keys it writes in Lua.
// Each Recover call costs O(all keys in Redis), whatever there is to
// recover. On a Redis Cluster the keyless call runs on whichever node the
// client picks, and SCAN sees that node's keys only: recovery finds the
// queue's jobs only when it lands on the node that owns the queue's slot.
// (The names the script builds share the queue's hash tag, so Cluster does
// not refuse them; what the seed's untagged names do on a cluster is
// TestSeed002ScriptOnCluster's.)
// Claims poll, as the seeds' workers do; claims, leases, fencing and
// completion are the corrected store's.
type Seed002 struct {
	*Store
	// formats: variant seed002-formats, whose recovery writes Unix
	// seconds into the record's dates as seed 002's does (seed002formats.go).
	formats bool
}

// Capabilities: the corrected store's, polling, plus seed-variant.
func (s *Seed002) Capabilities() jobstore.Capabilities {
	return withoutCore(s.Store.Capabilities())
}

// Recover runs the seed's SCAN over the whole keyspace, taking back at
// most max jobs (the seed's script has no limit; the scan is whole anyway).
func (s *Seed002) Recover(ctx context.Context, max int) (jobstore.RecoverResult, error) {
	var res jobstore.RecoverResult
	if err := jobstore.CheckMax("Recover", max); err != nil {
		return res, err
	}
	if err := s.Check(); err != nil {
		return res, err
	}
	if err := s.SweepExpired(ctx, s.Now(), max); err != nil {
		return res, err
	}
	prefix := s.Keys.Prefix()
	unix := ""
	if s.formats {
		unix = "unix"
	}
	v, err := s.Run(ctx, scriptSeed002Recover, nil, []string{prefix, base.Ms(s.Now()), fmt.Sprint(s.Opts.Retention.Milliseconds()), strconv.Itoa(max), unix})
	if err != nil {
		return res, fmt.Errorf("zset seed002: %w", err)
	}
	if arr, _ := v.([]any); len(arr) == 2 {
		res.Requeued, res.DeadLettered = base.Strings(arr[0]), base.Strings(arr[1])
	}
	return res, nil
}
