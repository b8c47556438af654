// Package keys names a queue's Redis keys, every backend's in one place
// (asynq's rdb habit): a key name is written once, here, and each
// backend's package doc lists the keys it uses.
package keys

import "strconv"

// Keys names a queue's keys. All of them carry the hash tag
// {queue}, so one queue lives in one Redis Cluster slot and a script may
// touch any of them. (lib.lua derives two names from a key it was given:
// the records, job_prefix, and the expiry index, expire_index.)
type Keys struct {
	prefix string
}

// New returns the key namer for queue.
func New(queue string) Keys { return Keys{prefix: "ae:{" + queue + "}:"} }

// Job is the key of job id's record.
func (k Keys) Job(id string) string { return k.prefix + "job:" + id }

// Of is the key of the queue's structure called name ("active", "dead", ...).
func (k Keys) Of(name string) string { return k.prefix + name }

// Common keys every backend keeps.
func (k Keys) Active() string    { return k.Of("active") }    // ZSET lease member -> deadline ms
func (k Keys) Dead() string      { return k.Of("dead") }      // ZSET id -> dead-letter time ms
func (k Keys) Completed() string { return k.Of("completed") } // counter of completions

// Expire is the LIST of the batches CompleteMany finished, one entry each,
// "<time the records may go (store clock, ms)>|<id>|<id>..."; lib.lua's
// expire_index names the same key from any key of the queue.
func (k Keys) Expire() string { return k.Of("expiring") }

// Audit is the HASH of counts a seed variant keeps of its seed's steps
// (early promotions, duplicate entries, refused claims...), read by
// jobstore.Auditor; kept in Redis so that every store instance of a run
// (workers, mover, recoverer) adds to one count. Corrected stores keep none.
func (k Keys) Audit() string { return k.Of("audit") }

// The sorted set's (backends/zset) and the time buckets' (backends/bucket)
// keys; Seq and Wake serve both, and dual's delayed members.
func (k Keys) Queue() string { return k.Of("queue") } // ZSET Ref -> RunAt ms (zset)
func (k Keys) Seq() string   { return k.Of("seq") }   // counter behind the members' sequence
func (k Keys) Wake() string  { return k.Of("wake") }  // ZSET wake-up marker for blocked claimers

// Waiters and Inbox are lib.lua's hand-off keys (waiters_key, inbox_key):
// the claimers registered to be handed due jobs, and one claimer's inbox,
// named by the token base of its registration.
func (k Keys) Waiters() string               { return k.Of("waiters") }
func (k Keys) Inbox(tokenBase string) string { return k.Of("inbox:" + tokenBase) }

// Ready is bucket's ZSET of due jobs, BucketIndex its ZSET bucket key ->
// earliest RunAt, Bucketed the count of jobs in buckets, and Bucket the
// HASH of delayed jobs whose RunAt falls in the window from start (ms).
func (k Keys) Ready() string             { return k.Of("ready") }
func (k Keys) BucketIndex() string       { return k.Of("buckets") }
func (k Keys) Bucketed() string          { return k.Of("bucketed") }
func (k Keys) Bucket(start int64) string { return k.BucketPrefix() + strconv.FormatInt(start, 10) }
func (k Keys) BucketPrefix() string      { return k.Of("bucket:") }

// Stream is the stream backends' (stream, dual) STREAM of entries and
// Delayed dual's ZSET of jobs not yet due.
func (k Keys) Stream() string  { return k.Of("stream") }
func (k Keys) Delayed() string { return k.Of("delayed") }

// Voided is the stream backends' SET of unread entries whose jobs were
// canceled, which claims skip (lib_stream.lua's stream_voided names it from
// the stream's key).
func (k Keys) Voided() string { return k.Of("voided") }

// Processing is seed 003's ZSET id -> claim time + lease (counted by Stats,
// read by no recovery); ProcessingOf is seed 004's marker of a popped job.
func (k Keys) Processing() string            { return k.Of("processing") }
func (k Keys) ProcessingOf(id string) string { return k.Of("processing:" + id) }

// Prefix is the queue's prefix, "ae:{queue}:", for seed 002's script,
// which builds every key name itself.
func (k Keys) Prefix() string { return k.prefix }

// The floor's keys (backends/floor): a LIST of ready ids, a LIST of ids in
// processing, and a HASH per job.
func (k Keys) FloorReady() string        { return k.Of("floor:ready") }
func (k Keys) FloorProcessing() string   { return k.Of("floor:processing") }
func (k Keys) FloorJob(id string) string { return k.Of("floor:job:" + id) }
