-- seed001_fail: SEED VARIANT (seed 001's UpdateJob of a retried job, lines
-- 225-287), not the corrected Fail. The lease is checked (this variant
-- keeps fencing); the job is Scheduled with RetryCount+1 and
-- RetryDelayUntil = run_at (the seed's own ISO 8601 copy of that time is
-- written too, SeedRetryDelayUntil, for its claim's tonumber() check). Then,
-- as UpdateJob does, the job goes back into the queue only when it is
-- Scheduled with RetryDelayUntil <= now (line 273), scored by
-- RetryDelayUntil. A retry with a backoff ahead of now is therefore put
-- nowhere, and nothing in the seed puts it back later: it never runs again
-- (a stranded retry, which the ledger counts as lost).
--
-- KEYS: active index, dead, record, queue.
-- ARGV: id, token, now, reason, run_at, retention ms, run_at as ISO 8601.
-- Returns: {status, run_at}.
-- Complexity: O(log A + log N).
local queue, iso, now = KEYS[4], ARGV[7], tonumber(ARGV[3])
return fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at)
    rec_set(key, 'SeedRetryDelayUntil', iso)
    if tonumber(run_at) <= now then
      redis.call('ZADD', queue, run_at, rec_get(key, 'Ref')[1])
    end
  end)
