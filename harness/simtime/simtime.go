// Package simtime runs a job store on simulated time under a harness that
// runs on the wall clock. The store decides on a clock.Scaled (a lease of
// 30 minutes is 30 simulated minutes, checked against simulated now) and
// the engine plans, sleeps and measures in real time on a scenario scaled
// down by the speed (conditions.Config.RealTime); Store is the adapter
// between them, converting every duration and instant that crosses:
// durations the engine passes (a lease, a claim's wait, an extension) are
// multiplied by the speed, instants (a RunAt) are mapped from the wall
// clock to the simulated one, and the instants a store returns (a job's
// times, a lease's deadline, a retry's RunAt) are mapped back.
//
// A RunAt is rounded up to the next simulated millisecond, the unit the
// stores keep: rounded down, a job could become due up to a millisecond
// of simulated time before the instant the engine planned and be counted
// as started early.
package simtime

import (
	"context"
	"fmt"
	"time"

	"github.com/aebench/aebench/clock"
	"github.com/aebench/aebench/jobstore"
)

// Store is a jobstore.Store on simulated time seen from the wall clock.
type Store struct {
	jobstore.Store
	c *clock.Scaled
}

// Wrap returns s seen from the wall clock when c is a simulated clock
// (the store must have been built with it as Options.Clock), and s itself
// on any other clock. The wrapper is a jobstore.Mover when s is one (the
// runner runs a mover loop only for a mover); it always completes in
// batches, through jobstore.CompleteAll, which falls back to Complete
// for a store that cannot.
func Wrap(s jobstore.Store, c clock.Clock) jobstore.Store {
	sc, ok := c.(*clock.Scaled)
	if !ok {
		return s
	}
	st := &Store{Store: s, c: sc}
	if m, ok := s.(jobstore.Mover); ok {
		return &moverStore{Store: st, m: m}
	}
	return st
}

func (s *Store) dur(d time.Duration) time.Duration { return time.Duration(float64(d) * s.c.Speed()) }

// toSim maps a wall-clock instant to simulated time, rounded up to the
// millisecond; zero stays zero (not set).
func (s *Store) toSim(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	sim := s.c.Sim(t)
	if r := sim.Truncate(time.Millisecond); r.Before(sim) {
		return r.Add(time.Millisecond)
	}
	return sim
}

// toReal maps a simulated instant to the wall clock; zero stays zero.
func (s *Store) toReal(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return s.c.Real(t)
}

func (s *Store) job(j jobstore.Job) jobstore.Job {
	for _, p := range []*time.Time{&j.RetryDelayUntil, &j.CreatedAt, &j.StartedAt, &j.CompletedAt,
		&j.LastUpdatedAt, &j.RunAt, &j.LeaseDeadline} {
		*p = s.toReal(*p)
	}
	return j
}

func (s *Store) leaseIn(l jobstore.Lease) jobstore.Lease {
	if !l.Deadline.IsZero() {
		l.Deadline = s.c.Sim(l.Deadline)
	}
	return l
}

func (s *Store) leaseOut(l jobstore.Lease) jobstore.Lease {
	l.Deadline = s.toReal(l.Deadline)
	return l
}

// Enqueue maps each RunAt to simulated time.
func (s *Store) Enqueue(ctx context.Context, jobs ...jobstore.NewJob) error {
	sim := make([]jobstore.NewJob, len(jobs))
	for i, j := range jobs {
		j.RunAt = s.toSim(j.RunAt)
		sim[i] = j
	}
	return s.Store.Enqueue(ctx, sim...)
}

// Claim scales the lease and the wait, and maps the claimed jobs back.
func (s *Store) Claim(ctx context.Context, req jobstore.ClaimRequest) ([]jobstore.Claimed, error) {
	req.Lease, req.Wait = s.dur(req.Lease), s.dur(req.Wait)
	got, err := s.Store.Claim(ctx, req)
	for i := range got {
		got[i].Job, got[i].Lease = s.job(got[i].Job), s.leaseOut(got[i].Lease)
	}
	return got, err
}

// Extend scales the extension.
func (s *Store) Extend(ctx context.Context, l jobstore.Lease, d time.Duration) (jobstore.Lease, error) {
	nl, err := s.Store.Extend(ctx, s.leaseIn(l), s.dur(d))
	return s.leaseOut(nl), err
}

// Complete passes the lease in simulated time.
func (s *Store) Complete(ctx context.Context, l jobstore.Lease, result []byte) error {
	return s.Store.Complete(ctx, s.leaseIn(l), result)
}

// Fail maps the retry's RunAt back.
func (s *Store) Fail(ctx context.Context, l jobstore.Lease, reason string) (jobstore.FailResult, error) {
	r, err := s.Store.Fail(ctx, s.leaseIn(l), reason)
	r.RunAt = s.toReal(r.RunAt)
	return r, err
}

// Get maps the record's times back.
func (s *Store) Get(ctx context.Context, id string) (jobstore.Job, error) {
	j, err := s.Store.Get(ctx, id)
	return s.job(j), err
}

// CompleteMany passes the leases in simulated time.
func (s *Store) CompleteMany(ctx context.Context, cs []jobstore.Completion) ([]error, error) {
	sim := make([]jobstore.Completion, len(cs))
	for i, c := range cs {
		c.Lease = s.leaseIn(c.Lease)
		sim[i] = c
	}
	return jobstore.CompleteAll(ctx, s.Store, sim)
}

// moverStore is a Store whose simulated-time store is a jobstore.Mover;
// Promote decides on the store's clock, so nothing crosses to convert.
type moverStore struct {
	*Store
	m jobstore.Mover
}

func (m *moverStore) Promote(ctx context.Context, max int) (int, error) { return m.m.Promote(ctx, max) }

// Locate asks the store where jobs sit (jobstore.Locator); Location holds
// no time, so nothing crosses to convert. It fails when the store cannot
// say, and the read-back falls back to Stats.
func (s *Store) Locate(ctx context.Context, ids []string) ([]jobstore.Location, error) {
	if l, ok := s.Store.(jobstore.Locator); ok {
		return l.Locate(ctx, ids)
	}
	return nil, fmt.Errorf("simtime: locate: %w", jobstore.ErrUnsupported)
}

// Audit is the store's audit (jobstore.Auditor), or nil when it keeps none.
func (s *Store) Audit(ctx context.Context) (map[string]int64, error) {
	if a, ok := s.Store.(jobstore.Auditor); ok {
		return a.Audit(ctx)
	}
	return nil, nil
}

// Census is the store's key census (jobstore.Censuser).
func (s *Store) Census(ctx context.Context) (jobstore.Census, error) {
	if c, ok := s.Store.(jobstore.Censuser); ok {
		return c.Census(ctx)
	}
	return jobstore.Census{}, fmt.Errorf("simtime: census: %w", jobstore.ErrUnsupported)
}
