-- stream_peek: the orphan sweep's read. A pending entry whose stream entry
-- is gone has no job to bring back and is only acknowledged.
--
-- KEYS: [1] stream.
-- ARGV: start (an exclusive '(<entry id>' or '-'), count.
-- Returns: {how many were pending, the last one's id or '', entry id, job id
--   pairs} for up to count pending entries after start.
-- Complexity: O(count).
local pending = redis.call('XPENDING', KEYS[1], STREAM_GROUP, ARGV[1], '+', tonumber(ARGV[2]))
local pairs, last = {}, ''
for _, p in ipairs(pending) do
  last = p[1]
  local e = redis.call('XRANGE', KEYS[1], last, last)[1]
  if e then
    pairs[#pairs + 1] = last
    pairs[#pairs + 1] = e[2][2]
  else
    redis.call('XACK', KEYS[1], STREAM_GROUP, last)
  end
end
return { #pending, last, pairs }
