// Package ledger is the books of a run: every job a producer planned, its
// acknowledgement, each attempt's start, completion, failure, fencing and
// recovery, as the workers report them (Events), and the check over them
// that counts what was lost, duplicated, unexpected or started early
// (Report). It reads no clock and knows no store or Redis: events carry
// their times, and the engine feeds it from its workers in process and from
// worker processes' pipes alike.
package ledger
