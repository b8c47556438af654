-- cancel: Cancel. The mover cannot rewrite records, so a Ref naming a
-- bucket may be stale: the job is then in ready (HDEL finds nothing). A Ref
-- naming another bucket than the declared one (the job was retried
-- meanwhile) is answered with AE_MOVED, and Go reads the Ref again.
--
-- KEYS: record, ready, bucket index, bucketed-job counter, the place the
--   record's Ref named when Go read it, then the wake-up marker when claims
--   block.
-- ARGV: id, now, retention ms.
-- Returns: 1, or an AE_NOT_FOUND, AE_NOT_CANCELABLE or AE_MOVED error.
-- Complexity: O(log R + log B).
local ready, place = KEYS[2], KEYS[5]
local f = rec_get(KEYS[1], 'Status', 'Ref')
local where, member = (f[2] or ''):match('^([^|]*)|(.+)$')
if is_waiting(f[1]) and where ~= ready and where ~= place then
  return redis.error_reply('AE_MOVED ' .. ARGV[1] .. ' is now in ' .. tostring(where))
end
local _, err = cancel_job(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if err then return err end
if where ~= ready and redis.call('HDEL', place, member) == 1 then
  redis.call('DECR', KEYS[4])
  -- An emptied bucket leaves the index; otherwise its score stays a lower
  -- bound of its RunAts, which the next mover visit makes exact again.
  -- A due bucket that empties may have held back ready jobs from claimers
  -- that leave due buckets to a background mover: it wakes one.
  if redis.call('EXISTS', place) == 0 then
    local score = KEYS[6] and redis.call('ZSCORE', KEYS[3], place)
    redis.call('ZREM', KEYS[3], place)
    if score and tonumber(score) <= tonumber(ARGV[2]) then wake(KEYS[6]) end
  end
else
  redis.call('ZREM', ready, member)
end
return 1
