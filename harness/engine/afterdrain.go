package engine

import (
	"context"
	"errors"
	"time"

	"github.com/aebench/aebench/harness/readback"
	"github.com/aebench/aebench/harness/summary"
	"github.com/aebench/aebench/jobstore"
)

// What the engine reads from the store and its Redis once the drain and
// the read-back are over: the store's audit, its key census, and under
// RDB the jobs a restart's snapshot could not hold.

// audit asks a store that implements jobstore.Auditor for its counts,
// once the drain and the read-back are over.
func (e *engine) audit() (map[string]int64, string) {
	a, ok := e.store.(jobstore.Auditor)
	if !ok {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), readback.SettleFor)
	defer cancel()
	m, err := a.Audit(ctx)
	if err != nil {
		return m, err.Error()
	}
	return m, ""
}

// forkSlack widens a snapshot's fork window back in time: an Enqueue call
// that started before the fork may have been applied after it.
const forkSlack = 100 * time.Millisecond

// snapshotCheck counts, under RDB with a redis_restart, the acknowledged
// jobs the last snapshot cannot hold (Enqueue started after its fork) and
// still open at the kill: what the promise says the restart loses, beside
// the ledger's lost.
func (e *engine) snapshotCheck(lost int64) *summary.SnapshotCheck {
	if e.hooks.Faults == nil || e.hooks.Faults.Snapshot == nil {
		return nil
	}
	fw, kill, ok := e.hooks.Faults.Snapshot()
	if !ok {
		return nil
	}
	after := e.led.AckedOpenAt(fw.Hi, kill, kill)
	window := e.led.AckedOpenAt(fw.Lo.Add(-forkSlack), fw.Hi, kill)
	return &summary.SnapshotCheck{ForkLo: fw.Lo, ForkHi: fw.Hi, KillAt: kill, SinceSnapshotS: kill.Sub(fw.Hi).Seconds(),
		AckedAfter: after, Window: window, Lost: lost, Matches: lost >= after && lost <= after+window}
}

// census asks a store that implements jobstore.Censuser for the census
// of its queue's keys, after the read-back: what the queue left behind.
func (e *engine) census() (*jobstore.Census, string) {
	c, ok := e.store.(jobstore.Censuser)
	if !ok {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), readback.SettleFor)
	defer cancel()
	cs, err := c.Census(ctx)
	if err != nil {
		if errors.Is(err, jobstore.ErrUnsupported) {
			return nil, ""
		}
		return nil, err.Error()
	}
	return &cs, ""
}
