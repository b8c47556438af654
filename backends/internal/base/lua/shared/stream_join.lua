-- stream_join: a stream claimer's registration as a waiter without a claim
-- (base's Stream.Claim, right after a claim that drained the queue or was
-- handed jobs): it registers only when nothing waits for the group, so that
-- every due entry appended after it either is handed to the claimer or sets
-- the marker (lib_stream.lua's stream_wake); an entry appended before it,
-- when no one waited and so with no wake, makes it refuse, and the claimer
-- runs a claim call instead. This spares the claim call that would read
-- nothing only to register (lib.lua's hand-off).
--
-- KEYS: [1] the stream, [2] dual's delayed ZSET when claims promote.
-- ARGV: now, the registration's member, until when (base's Handoff).
-- Returns: {1, the delayed ZSET's head score or ''} when registered; {0}
--   when an entry is unread (a voided or early one too), a delayed job is
--   due or the stream is missing (the claim call creates its group again):
--   nothing was written.
-- Complexity: O(G + log W) for G consumer groups and W waiters.
local stream, now = KEYS[1], ARGV[1]
local head = KEYS[2] and zsets_head(KEYS[2]) -- read once: busy's check and the reply
if (head and ms_le(head, now)) or redis.call('EXISTS', stream) == 0 or stream_busy(stream, nil, now) then
  return { 0 }
end
handoff_join(stream, ARGV[2], ARGV[3])
return { 1, head or '' }
