-- complete_many: CompleteMany in one call (lib.lua's complete_many): the
-- records finished, the leases released with one ZREM, the records retired
-- into the expiry list with one RPUSH (and what is past due there swept).
--
-- KEYS: [1] active index, [2] completed counter, [2+i] record of the i-th
--   lease.
-- ARGV: now, retention ms, then id, token, result per lease.
-- Returns: one character per lease, '1' completed, '0' lease lost.
-- Complexity: O(k log A) for k leases, plus the records swept.
return complete_many(KEYS[1], KEYS[2], 3, 3, ARGV[1], ARGV[2])
