// Package base holds what every backend shares, written once so that a
// difference in the numbers is a difference in strategy, not in care: the job
// record codec (hash and JSON), key naming under one hash tag per queue, the
// Lua library every script is built on (records, leases, fencing, retry and
// dead-letter decisions), script composition and loading, lease tokens,
// backoff with jitter, input validation and the mapping of script error
// replies to jobstore's sentinel errors.
//
// Script layout: every script a store runs is the record prelude of its
// encoding (lua/rec_hash.lua or lua/rec_json.lua), then lua/lib.lua, then the
// script's own body from the backend's lua/ folder. Bodies call the library;
// they never build a key name: every key a script touches arrives in KEYS.
package base
