-- stats: counts on the store clock, in one atomic step. A bucket that fell
-- due after Go's read is not declared: the script then returns nil and Go
-- reads the index again.
--
-- KEYS: ready, bucket index, bucketed-job counter, active index, dead,
--   completed counter, then the buckets Go read from the index as due.
-- ARGV: now.
-- Returns: {due, delayed, in progress, dead, completed}, or nil (above).
-- Complexity: O(log R + b) for declared buckets holding b jobs.
local now = tonumber(ARGV[1])
local declared = {}
for b = 7, #KEYS do declared[KEYS[b]] = true end
for _, k in ipairs(redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE')) do
  if not declared[k] then return false end
end
local due_in_buckets = 0
for b = 7, #KEYS do
  for _, at in ipairs(redis.call('HVALS', KEYS[b])) do
    if tonumber(at) <= now then due_in_buckets = due_in_buckets + 1 end
  end
end
local bucketed = tonumber(redis.call('GET', KEYS[3]) or '0')
return {
  redis.call('ZCOUNT', KEYS[1], '-inf', now) + due_in_buckets,
  redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') + bucketed - due_in_buckets,
  redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]),
  tonumber(redis.call('GET', KEYS[6]) or '0'),
}
