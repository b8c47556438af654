-- cancel: Cancel (lib.lua's cancel_job), then the job leaves the queue.
--
-- KEYS: record, queue.
-- ARGV: id, now, retention ms.
-- Returns: 1, or an AE_NOT_FOUND or AE_NOT_CANCELABLE error.
-- Complexity: O(log N).
local ref, err = cancel_job(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if not ref then return err end
redis.call('ZREM', KEYS[2], ref)
return 1
