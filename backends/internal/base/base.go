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
// Cost of a call: most of a script's Redis instructions at a low rate are
// the call's, not the job's (the KEYS and ARGV tables, each redis.call's
// conversions, Lua's garbage collector). So the scripts pass numbers as
// text (a Lua number handed to redis.call is formatted with printf
// "%.17g") and memoize the names derived from a queue key; the profile and
// the counts are in docs/results.md ("Measurements from the package docs").
package base
