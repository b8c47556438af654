-- seed001_fail: SEED VARIANT (seed 001), not the corrected Fail. The lease
-- is checked (this variant keeps fencing), the job is Scheduled with
-- RetryCount+1 and RetryDelayUntil = run_at, and the seed's own copy of
-- that time is written as the seed writes it, an ISO 8601 date
-- (SeedRetryDelayUntil). The job goes back in the queue due now: the
-- seed's claim is meant to skip it until then, and never does
-- (seed001_claim.lua).
-- KEYS: active index, dead, record, queue.
-- ARGV: id, token, now, reason, run_at, retention ms, run_at as ISO 8601.
-- Returns {status, run_at}.
local queue, iso = KEYS[4], ARGV[7]
return fail_job(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  function(key, id, run_at)
    rec_set(key, 'SeedRetryDelayUntil', iso)
    redis.call('ZADD', queue, ARGV[3], rec_get(key, 'Ref')[1])
  end)
