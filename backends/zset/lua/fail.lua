-- fail: Fail. A retry goes back into the queue under its old Ref, scored by run_at.
--
-- KEYS: active, dead, record, queue, then the wake-up marker when claims
--   block.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at} (lib.lua's fail_job): Scheduled and the retry's
--   RunAt, or Failed and now; an AE_LEASE_LOST error when the lease is gone.
-- Complexity: O(log A + log N).
return fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at)
    local ref, new = seq_ref_of(key, id, KEYS[4])
    if new then rec_set(key, 'Ref', ref) end
    zadd_wake(KEYS[4], KEYS[5] or false, run_at, ref, ARGV[3])
  end)
