-- promote: the mover. Moves due jobs from the delayed ZSET into the stream,
-- each exactly once (lib_stream.lua's stream_promote): ZREM picks the one winner
-- among concurrent movers, and the XADD happens in the same atomic call, so
-- no crash can fall between the two (the seed's mover did them in separate
-- commands). Record keys are derived from the stream key (job_prefix).
-- A promotion wakes a waiting claimer (lib_stream.lua's stream_wake).
--
-- KEYS: [1] delayed ZSET, [2] stream.
-- ARGV: now, then the members a plain read found due, oldest first.
-- Returns: how many it moved.
-- Complexity: O(M log D) for M members.
local members = {}
for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
local moved = stream_promote(KEYS[1], KEYS[2], job_prefix(KEYS[2]), ARGV[1], #members, members)
if moved > 0 then stream_wake(KEYS[2], ARGV[1]) end
return moved
