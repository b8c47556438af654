package jobstore

import "context"

// Census is what a queue left in Redis, read after the drain: every key
// under the queue's hash tag by role and type, the records the contract
// keeps, and what it should not have left (leaks).
type Census struct {
	// Keys groups the queue's keys by role ("job:*", "active", "stream",
	// "bucket:*"...) and Redis type.
	Keys []KeyGroup `json:"keys"`
	// Records counts job records; Open those queued, scheduled or in
	// progress (the read-back's open jobs), Kept the finished ones the
	// contract keeps within their retention.
	Records int64 `json:"records"`
	Open    int64 `json:"open"`
	Kept    int64 `json:"kept"`
	// AwaitingTrim counts stream entries read and done with that the
	// stream still holds by design: a strategy that trims whole listpack
	// nodes (XTRIM MINID ~) keeps up to a node of them.
	AwaitingTrim int64 `json:"awaiting_trim,omitempty"`
	// Leaks counts what nothing will read or remove, by kind (the Leak*
	// constants); Examples names up to a few of each.
	Leaks    map[string]int64    `json:"leaks,omitempty"`
	Examples map[string][]string `json:"leak_examples,omitempty"`
	// Partial, when set, says why the census counted keys by role only
	// (no sizes, records or leaks): a queue too large to read key by key
	// after every run.
	Partial string `json:"partial,omitempty"`
}

// KeyGroup is one role and type of a queue's keys.
type KeyGroup struct {
	Role  string `json:"role"`
	Type  string `json:"type"`
	Count int64  `json:"count"`
	// Bytes is MEMORY USAGE summed over the group's keys.
	Bytes int64 `json:"bytes"`
	// Members is the group's members, fields, entries or elements summed.
	Members int64 `json:"members"`
	// Expiring counts the group's keys with a TTL: Redis removes them
	// (a finished record, a hand-off inbox).
	Expiring int64 `json:"expiring,omitempty"`
}

// Kinds of leak a census names.
const (
	// LeakIndexNoRecord: an index entry (a queue, delayed, ready, active,
	// dead-letter or bucket member, a stream entry) whose record is gone.
	LeakIndexNoRecord = "index_entry_without_record"
	// LeakRecordNoIndex: an open record in no index that claims, movers or
	// recovery read: nothing will ever run it.
	LeakRecordNoIndex = "open_record_in_no_index"
	// LeakPELFinished: a pending stream entry whose job finished (or whose
	// record or entry is gone): nothing will acknowledge it.
	LeakPELFinished = "pel_entry_of_finished_job"
	// LeakStreamUnread: stream entries every consumer group has read and
	// none holds pending, beyond the listpack node a trim by whole nodes
	// keeps (stream-node-max-entries): nothing will read or delete them.
	LeakStreamUnread = "stream_entry_nothing_reads"
	// LeakEmptyBucket: a bucket index member whose bucket is gone or empty.
	LeakEmptyBucket = "empty_bucket"
	// LeakNeverExpires: a finished record with no TTL and no entry in the
	// expiry list: kept forever.
	LeakNeverExpires = "finished_record_never_expires"
	// LeakExpiredPresent: a record whose expiry-list entry fell due more
	// than the census's grace ago and is still there.
	LeakExpiredPresent = "expired_record_still_present"
)

// Censuser is implemented by stores that can take a census of their
// queue's keys. It reads, never writes; the harness calls it once, after
// the drain and the read-back.
type Censuser interface {
	Census(ctx context.Context) (Census, error)
}

// LeakCount is every leak counted.
func (c Census) LeakCount() int64 {
	var n int64
	for _, v := range c.Leaks {
		n += v
	}
	return n
}
