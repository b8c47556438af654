-- unfenced_fail: SEED VARIANT (every seed), not the corrected Fail. The
-- seeds' failure update: retry (Scheduled at run_at, back in the queue) or
-- dead-letter whoever calls, with no check that the caller still holds the
-- job (no fencing): a worker whose job was recovered puts it back in the
-- queue while another worker runs it.
--
-- KEYS: active index, dead, record, queue, then the wake-up marker when claims
--   block.
-- ARGV: id, token, now, reason, run_at, retention ms.
-- Returns: {status, run_at}, or AE_NOT_FOUND when the record is gone.
-- Complexity: O(log A + log N).
local active, dead, key, queue, marker = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5] or false
local id, token, now, run_at = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
if not rec_exists(key) then return err_not_found(id) end
lease_release(active, id, token)
if retry_or_dead(dead, key, id, now, ARGV[4], run_at, ARGV[6]) then
  zadd_wake(queue, marker, run_at, rec_get(key, 'Ref')[1], now)
  return { tonumber(ST_SCHEDULED), run_at }
end
return { tonumber(ST_FAILED), now }
