-- stream_fail: Fail for the stream backends. The job's entry is dropped
-- either way; a retry is placed anew (stream_place), a dead-lettered job is
-- not.
--
-- KEYS: active index, dead ZSET, record, stream, and for dual the delayed ZSET
--   and its sequence.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at} (lib.lua's fail_job): Scheduled and the retry's
--   RunAt, or Failed and now; an AE_LEASE_LOST error when the lease is gone.
-- Complexity: O(log A + log D).
local stream, ref = KEYS[4], stream_lease_entry(KEYS[3], ARGV[2])
local r = fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at) stream_requeue(stream, KEYS[5], KEYS[6], key, id, run_at, ARGV[3]) end)
if r[1] == tonumber(ST_FAILED) then stream_drop(stream, ref) end
return r
