-- seed003_fail: SEED VARIANT (seeds 003 and 000), not the corrected Fail:
-- with no lease check (the claim granted none), the job is retried (a new
-- entry, re-appended until its RunAt as the corrected store does) or
-- dead-lettered and its entry deleted.
--
-- KEYS: active index, dead, record, stream, processing ZSET.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at}, or AE_NOT_FOUND when the record is gone.
-- Complexity: O(log P).
local key, id, token, now, run_at, stream = KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[5], KEYS[4]
if not rec_exists(key) then return err_not_found(id) end
lease_release(KEYS[1], id, token)
redis.call('ZREM', KEYS[5], id)
if retry_or_dead(KEYS[2], key, id, now, ARGV[4], run_at, ARGV[6]) then
  stream_requeue(stream, nil, nil, key, id, run_at, now)
  return { tonumber(ST_SCHEDULED), run_at }
end
stream_drop(stream, rec_get(key, 'Ref')[1])
return { tonumber(ST_FAILED), now }
