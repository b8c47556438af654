package base

// Keys names a queue's keys. All of them carry the hash tag {queue}, so one
// queue lives in one Redis Cluster slot and a script may touch any of them.
type Keys struct {
	prefix string
}

// NewKeys returns the key namer for queue.
func NewKeys(queue string) Keys { return Keys{prefix: "ae:{" + queue + "}:"} }

// Job is the key of job id's record.
func (k Keys) Job(id string) string { return k.prefix + "job:" + id }

// Of is the key of the queue's structure called name ("active", "dead", ...).
func (k Keys) Of(name string) string { return k.prefix + name }

// Common keys every backend keeps.
func (k Keys) Active() string    { return k.Of("active") }    // ZSET lease member -> deadline ms
func (k Keys) Dead() string      { return k.Of("dead") }      // ZSET id -> dead-letter time ms
func (k Keys) Completed() string { return k.Of("completed") } // counter of completions

// Expire is the ZSET id -> the time (store clock, ms) a record CompleteMany
// finished may be deleted; lib.lua's expire_index names the same key from
// any key of the queue.
func (k Keys) Expire() string { return k.Of("expire") }

// Audit is the HASH of counts a seed variant keeps of its seed's steps
// (early promotions, duplicate entries, refused claims...), read by
// jobstore.Auditor; kept in Redis so that every store instance of a run
// (workers, mover, recoverer) adds to one count. Corrected stores keep none.
func (k Keys) Audit() string { return k.Of("audit") }
