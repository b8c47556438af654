-- stream_cancel: Cancel. Takes the job's Ref out of where it waits: its
-- stream entry (unread, or read by a claimer that has not activated it
-- yet), or its delayed member.
--
-- KEYS: record, stream, and for dual the delayed ZSET.
-- ARGV: id, now, retention ms.
-- Returns: 1, or an AE_NOT_FOUND or AE_NOT_CANCELABLE error.
-- Complexity: O(log D).
local ref, err = cancel_job(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if not ref then return err end
if ref:match('^%d+%-%d+$') then
  stream_drop(KEYS[2], ref)
elseif KEYS[3] then
  redis.call('ZREM', KEYS[3], ref)
end
return 1
