-- unfenced_complete: SEED VARIANT (every seed), not the corrected
-- Complete. The seeds' job update: the record is marked Completed whoever
-- calls, with no check that the caller still holds the job (no fencing), so
-- a worker whose job was recovered and claimed again overwrites its state.
-- The caller's own lease member, if any, is removed.
--
-- KEYS: active index, completed counter, record.
-- ARGV: id, token, now, result, retention ms.
-- Returns: 1, or AE_NOT_FOUND when the record is gone.
-- Complexity: O(log A).
local active, completed, key = KEYS[1], KEYS[2], KEYS[3]
local id, token, now = ARGV[1], ARGV[2], ARGV[3]
if not rec_exists(key) then return err_not_found(id) end
lease_release(active, id, token)
rec_set(key, 'Status', ST_COMPLETED, 'Result', ARGV[4], 'CompletedAt', now, 'LastUpdatedAt', now)
redis.call('PEXPIRE', key, ARGV[5])
redis.call('INCR', completed)
return 1
