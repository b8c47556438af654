-- stream_claim: a whole claim in one call when entries are waiting: for
-- dual in mover mode "claim", promote due delayed jobs; then XREADGROUP
-- NOACK (without BLOCK, which scripts may not use: the read and the leases
-- are one atomic call, so no pending entry is needed) and put up to take
-- of the entries read under a lease (lib_stream.lua's stream_take, which derives the
-- record keys: see job_prefix). A claim that finds nothing blocks with
-- XREADGROUP BLOCK outside, then runs stream_activate (the seed
-- variants); stream's and dual's claims (with ARGV[9..11]) instead first
-- end the claimer's registration as a waiter, returning at once what an
-- enqueue handed to it, and register it anew when they read nothing; it
-- then blocks on its inbox and the marker (lib.lua's hand-off).
--
-- KEYS: [1] active index, [2] stream, [3] dual's delayed ZSET when this call
--   promotes.
-- ARGV: now, lease deadline, worker, token base, take, read count, consumer,
--   promote max (0: none), and with the hand-off the registration to end,
--   the one to make, and until when (base's Handoff; '' for none).
-- Returns: {claimed jobs (lib.lua's view_out), the stream's last entry id before any append,
--   earliest RunAt appended for not being due or '', entries read, the last
--   one's id or '', the delayed ZSET's head score or '' (with KEYS[3])}, and
--   a seventh item, the handed item (lib.lua's handoff_give), when the
--   ending registration had been handed jobs (then nothing else was done).
-- Complexity: O(p log D + n + k log A) for p promoted, n entries read, k
--   taken.
local active, stream, delayed = KEYS[1], KEYS[2], KEYS[3]
local now, pmax = ARGV[1], tonumber(ARGV[8])
local prefix = job_prefix(stream)
if ARGV[9] then
  local handed = handoff_leave(stream, ARGV[9])
  if handed then return { {}, '', '', 0, '', '', handed } end
end
if delayed and pmax > 0 and stream_promote(delayed, stream, prefix, now, pmax) > 0 then stream_wake(stream, now) end
local tail = stream_tail(stream)
local read = redis.call('XREADGROUP', 'GROUP', STREAM_GROUP, ARGV[7], 'COUNT', ARGV[6], 'NOACK', 'STREAMS', stream, '>')
local entries, fields = {}, {}
if read then
  for k, e in ipairs(read[1][2]) do
    entries[2 * k - 1], entries[2 * k], fields[k] = e[1], e[2][2], e[2]
  end
end
local out, next_at = stream_take(active, stream, prefix, entries, now, ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]),
  fields)
local next_delayed = ''
if delayed then
  next_delayed = redis.call('ZRANGE', delayed, '0', '0', 'WITHSCORES')[2] or ''
end
if ARGV[10] and #entries == 0 then handoff_join(stream, ARGV[10], ARGV[11]) end
return { out, tail, next_at, #entries / 2, entries[#entries - 1] or '', next_delayed }
