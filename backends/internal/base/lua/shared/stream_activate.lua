-- stream_activate: claim after a blocking XREADGROUP, which cannot run in a
-- script: it puts up to take of the entries read under a lease
-- (lib_stream.lua's stream_take, which derives the record keys: see
-- job_prefix).
--
-- KEYS: [1] active index, [2] stream, [3] dual's delayed ZSET when claims
--   promote (mover "claim").
-- ARGV: now, lease deadline, worker, token base, take, then entry id, job id
--   per entry.
-- Returns: {claimed jobs (lib.lua's view_out), the stream's last entry id before any append
--   (a claim that has read up to it has looked at every waiting entry),
--   earliest RunAt appended for not being due, or '', the delayed ZSET's head
--   score or '' (with KEYS[3]; nil without)}.
-- Complexity: O(n + k log A) for n entries, k taken.
local active, stream, delayed = KEYS[1], KEYS[2], KEYS[3]
local tail = stream_tail(stream)
local entries = {}
for i = 6, #ARGV do entries[#entries + 1] = ARGV[i] end
local out, next_at = stream_take(active, stream, job_prefix(stream), entries, ARGV[1], ARGV[2], ARGV[3], ARGV[4],
  tonumber(ARGV[5]))
local head = false
if delayed then head = redis.call('ZRANGE', delayed, '0', '0', 'WITHSCORES')[2] or '' end
return { out, tail, next_at, head }
