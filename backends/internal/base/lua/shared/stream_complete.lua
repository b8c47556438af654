-- stream_complete: Complete for the stream backends: completes the held
-- lease, then acknowledges and deletes the job's entry, which the token names.
--
-- KEYS: active index, completed counter, record, stream.
-- ARGV: id, token, now, result, retention ms.
-- Returns: 1, or an AE_LEASE_LOST error when the lease is no longer held.
-- Complexity: O(log A).
local r = complete_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if r == 1 then stream_drop(KEYS[4], stream_lease_entry(KEYS[3], ARGV[2])) end
return r
