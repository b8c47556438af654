package ledger

import "strings"

// Causes of a lost job, as Report.LostCauses names them.
const (
	// CauseEvicted: Redis evicted keys at maxmemory during the run and the
	// read-back found the job's record gone, or the record in no index.
	CauseEvicted = "evicted"
	// CauseRestart: Redis restarted from what its persistence had kept,
	// and the job was acknowledged after that.
	CauseRestart = "redis_restart"
	// CauseOOM: Redis refused writes at maxmemory in the run (and evicted
	// nothing) and the job's record or index entry is gone: the store or
	// the driver dropped it when a write was refused.
	CauseOOM = "oom_refusal"
	// CauseStore: none of the above explains it: the store dropped the job.
	CauseStore = "store"
)

// LossContext is what the run knows of its Redis that can make a job
// vanish without the store dropping it.
type LossContext struct {
	// EvictedKeys is INFO evicted_keys over the run.
	EvictedKeys int64
	// LossyRestart: a redis_restart fault brought Redis back under a
	// persistence that does not keep every acknowledged write.
	LossyRestart bool
	// OOMRefused: Redis refused some of the run's writes at maxmemory.
	OOMRefused bool
}

// AttributeLost fills LostCauses from LostStates: a job whose record or
// index entry is gone is lost to eviction when Redis evicted keys, to a
// refused write when Redis refused writes at maxmemory, to a restart when
// Redis came back from a lossy persistence, and to the store otherwise. A
// lost job stays counted in Lost whatever its cause; the cause only says
// why. Where several of them happened the cause names each ("evicted_or_
// oom_refusal"), since the read-back cannot tell them apart.
func (r *Report) AttributeLost(c LossContext) {
	r.LostCauses = nil
	if r.Lost == 0 {
		return
	}
	var causes []string
	if c.EvictedKeys > 0 {
		causes = append(causes, CauseEvicted)
	}
	if c.OOMRefused {
		causes = append(causes, CauseOOM)
	}
	if c.LossyRestart {
		causes = append(causes, CauseRestart)
	}
	gone := CauseStore
	if len(causes) > 0 {
		gone = strings.Join(causes, "_or_")
	}
	r.LostCauses = map[string]int64{}
	var placed int64
	for state, n := range r.LostStates {
		cause := CauseStore
		switch {
		case state == "not_found" || strings.HasSuffix(state, "_in_no_queue"):
			cause = gone
		}
		r.LostCauses[cause] += n
		placed += n
	}
	if rest := r.Lost - placed; rest > 0 {
		r.LostCauses[gone] += rest // lost without a read-back state
	}
}
