-- expire: Recover's sweep of the expiry list (lib.lua's sweep_expired),
-- so that records CompleteMany finished go after their retention even when
-- no later batch completes.
--
-- KEYS: [1] the expiry list.
-- ARGV: now, max.
-- Returns: the number of records deleted.
-- Complexity: O(M) for M records deleted.
return sweep_expired(KEYS[1], job_prefix(KEYS[1]), ARGV[1], tonumber(ARGV[2]))
