-- fail: Fail. A retry goes into the bucket of its run_at under its old
-- member, so it keeps its place among jobs of equal RunAt, and wakes a
-- claimer when it lands ahead of the queue's head (lib.lua's ahead).
--
-- KEYS: active, dead, record, bucket of run_at, bucket index, bucketed-job
--   counter, then, when claims block, ready and the wake-up marker.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at} (lib.lua's fail_job): Scheduled and the retry's
--   RunAt, or Failed and now; an AE_LEASE_LOST error when the lease is gone.
-- Complexity: O(log A + log B).
return fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at)
    local marker = KEYS[8] or false
    local head = marker and zsets_head(KEYS[7], KEYS[5])
    local member = seq_ref_of(key, id, KEYS[4])
    redis.call('HSET', KEYS[4], member, run_at)
    redis.call('ZADD', KEYS[5], 'LT', run_at, KEYS[4])
    redis.call('INCR', KEYS[6])
    rec_set(key, 'Ref', KEYS[4] .. '|' .. member)
    if marker and ahead(run_at, head, ARGV[3]) then wake(marker) end
  end)
