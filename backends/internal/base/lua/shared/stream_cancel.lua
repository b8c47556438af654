-- stream_cancel: Cancel. Takes the job's Ref out of where it waits: its
-- stream entry, or its delayed member. A corrected store voids the entry
-- (lib_stream.lua's stream_void: voided when unread, acknowledged when read
-- by a claimer that has not activated it yet); a seed variant acknowledges
-- and deletes it (stream_drop), as its seed does.
--
-- KEYS: record, stream, and for dual the delayed ZSET.
-- ARGV: id, now, retention ms, 'void' or 'drop'.
-- Returns: 1, or an AE_NOT_FOUND or AE_NOT_CANCELABLE error.
-- Complexity: O(log D), plus O(G) for a voided entry's XINFO GROUPS (G
--   groups: one).
local ref, err = cancel_job(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if not ref then return err end
if ref:match('^%d+%-%d+$') then
  if ARGV[4] == 'drop' then stream_drop(KEYS[2], ref) else stream_void(KEYS[2], ref) end
elseif KEYS[3] then
  redis.call('ZREM', KEYS[3], ref)
end
return 1
