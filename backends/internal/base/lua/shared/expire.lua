-- expire: Recover's sweeps: the expiry list (lib.lua's sweep_expired), so
-- that records CompleteMany finished go after their retention even when no
-- later batch completes; and the hand-off's expired registrations
-- (handoff_sweep: claimers that died registered), derived from the list's
-- key (same hash tag).
--
-- KEYS: [1] the expiry list.
-- ARGV: now, max.
-- Returns: the number of records deleted.
-- Complexity: O(M + log W + E) for M records deleted, W waiters, E expired.
handoff_sweep(waiters_key(KEYS[1]), ARGV[1])
return sweep_expired(KEYS[1], job_prefix(KEYS[1]), ARGV[1], tonumber(ARGV[2]))
