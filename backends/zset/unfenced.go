package zset

import (
	"context"

	"github.com/aebench/aebench/backends/internal/base"
	"github.com/aebench/aebench/jobstore"
)

// Unfenced is a SEED VARIANT, not a job store to use: the corrected zset
// store whose Complete and Fail do not check that the caller still holds
// the job, as in every seed (their job updates carry no token). Claims,
// leases, heartbeats and recovery are the corrected ones, so the variant
// shows this one flaw: a worker whose lease lapsed and whose job was
// recovered and claimed again still completes it (a second completion) or
// puts it back in the queue while another worker runs it, where the
// corrected store answers ErrLeaseLost (fenced).
type Unfenced struct{ *Store }

var _ jobstore.BatchCompleter = (*Unfenced)(nil)

// Capabilities: the corrected store's, without fencing.
func (s *Unfenced) Capabilities() jobstore.Capabilities {
	return withoutCore(s.Store.Capabilities(), jobstore.CapFencing)
}

// Complete marks the job Completed without checking the lease.
func (s *Unfenced) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.completeUnfenced(ctx, l, result)
}

// CompleteMany completes each lease as Complete does.
func (s *Unfenced) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	return base.CompleteEach(ctx, cs, s.Complete)
}

// Fail retries or dead-letters without checking the lease.
func (s *Unfenced) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	return s.failUnfenced(ctx, l, reason)
}
