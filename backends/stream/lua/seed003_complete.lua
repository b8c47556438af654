-- seed003_complete: SEED VARIANT (seeds 003 and 000), not the corrected
-- Complete: the record is marked Completed with no lease check (the claim
-- granted none) and the job's entry, already acknowledged, is deleted.
--
-- KEYS: active index, completed counter, record, stream, processing ZSET.
-- ARGV: id, token, now, result, retention ms.
-- Returns: 1, or AE_NOT_FOUND when the record is gone.
-- Complexity: O(log P).
local key, id, token, now = KEYS[3], ARGV[1], ARGV[2], ARGV[3]
if not rec_exists(key) then return err_not_found(id) end
lease_release(KEYS[1], id, token)
redis.call('ZREM', KEYS[5], id)
rec_set(key, 'Status', ST_COMPLETED, 'Result', ARGV[4], 'CompletedAt', now, 'LastUpdatedAt', now)
redis.call('PEXPIRE', key, ARGV[5])
redis.call('INCR', KEYS[2])
stream_drop(KEYS[4], stream_lease_entry(key, token))
return 1
