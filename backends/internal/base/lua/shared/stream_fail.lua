-- stream_fail: Fail for the stream backends: a retry is placed anew
-- (lib_stream.lua's stream_move), a dead-lettered job is not. The entry the
-- job was read from needs nothing: the claim acknowledged it. A retry
-- appended due wakes a waiting claimer (lib_stream.lua's stream_wake).
--
-- KEYS: active index, dead ZSET, record, stream, and for dual the delayed ZSET
--   and its sequence.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at} (lib.lua's fail_job): Scheduled and the retry's
--   RunAt, or Failed and now; an AE_LEASE_LOST error when the lease is gone.
-- Complexity: O(log A + log D).
return fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at)
    stream_move(KEYS[4], KEYS[5], KEYS[6], key, id, run_at, ARGV[3])
    if ms_le(run_at, ARGV[3]) then stream_wake(KEYS[4], ARGV[3]) end
  end)
