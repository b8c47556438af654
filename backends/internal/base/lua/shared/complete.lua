-- complete: Complete of one held lease (lib.lua's complete_job). The
-- completion counter and the record are derived from the active index
-- (completed_key, job_prefix), as base.Keys names them: a key sent cost
-- about 1,100 instructions under callgrind to send, parse and push.
--
-- KEYS: active index (the counter and the record are derived from it).
-- ARGV: id, token, now, result, retention ms.
-- Returns: 1, or an AE_LEASE_LOST error when the lease is no longer held.
-- Complexity: O(log A).
local active, id = KEYS[1], ARGV[1]
return complete_job(active, completed_key(active), job_prefix(active) .. id, id, ARGV[2], ARGV[3], ARGV[4], ARGV[5])
