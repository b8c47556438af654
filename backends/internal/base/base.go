// Package base holds what every backend shares, written once so that a
// difference in the numbers is a difference in strategy, not in care: the job
// record codec (hash and JSON), key naming under one hash tag per queue, the
// Lua library every script is built on (records, leases, fencing, retry and
// dead-letter decisions), script composition and loading, lease tokens,
// backoff with jitter, input validation and the mapping of script error
// replies to jobstore's sentinel errors.
//
// Script layout: a store's scripts are one Redis function library (FUNCTION
// LOAD on every master, once per server; scripts.go): the record prelude of
// its encoding (lua/rec_hash.lua or lua/rec_json.lua), then lua/lib.lua and
// lua/lib_stream.lua, then each body of the backend's lua/ folder and of lua/shared/ wrapped as
// a registered function, called with FCALL. The library is compiled once,
// so a call pays for its body's work only (an EVALSHA of the same text set
// the whole library up on every call). A server without Functions (before
// Redis 7) gets one EVALSHA script per body instead.
//
// Keys: every key a script touches arrives in KEYS, with one exception: a
// claim script derives the record keys of the jobs it takes from a queue
// key it was given (lib.lua's job_prefix: the same "ae:{queue}:" prefix, so
// the same hash tag and Cluster slot, which Redis Cluster accepts), because
// no caller can name them before the claim has chosen its jobs; declaring
// them cost a second round trip per claim.
//
// Cost of a call (2026-11-27; ci-cost.yaml, one job a call, Redis under
// callgrind, profiled on a redis-server 7.0.15 built with symbols, since
// Debian's is stripped): at a low rate a job's three or four FCALLs cost
// 330-570k Redis instructions, most of it a call rather than a job: the
// KEYS and ARGV tables (about 11k a call), each redis.call's argument and
// reply conversion (about 7k), Lua's garbage collector (about 20k). Two
// parts were ours: a Lua number handed to redis.call is formatted with
// printf "%.17g" (about 2,200 instructions each), so the scripts now pass
// numbers as text (literals quoted, counts through lib.lua's num_text);
// and the names derived from a queue key (job_prefix, waiters_key, ...)
// were a pattern match and a concatenation each time, now memoized.
// Instructions a job, one run each before and after (counted, so
// repeatable): zset 365.0k -> 334.8k, bucket 420.6k -> 377.8k, stream
// 570.2k -> 531.9k (with its join, package stream), dual 570.9k ->
// 512.6k. At speed (capacity.yaml's batched cell, a hundred jobs a call)
// the change is within a run's spread: zset 107.1k before and after.
package base
