-- complete: Complete of one held lease (lib.lua's complete_job).
--
-- KEYS: active index, completed counter, record.
-- ARGV: id, token, now, result, retention ms.
-- Returns: 1, or an AE_LEASE_LOST error when the lease is no longer held.
-- Complexity: O(log A).
return complete_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
