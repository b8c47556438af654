-- pop: claim step 1. Takes up to max due members off the queue in one
-- atomic step and grants each a lease, so concurrent claimers never race
-- for the head job (the seed read ids outside Lua, then fought over them).
-- KEYS[1] queue ZSET, KEYS[2] active index.
-- ARGV: now, max, lease deadline, token base. Returns id, token pairs.
local now, max, deadline, base = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local refs = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, max)
local out = {}
for i, ref in ipairs(refs) do
  redis.call('ZREM', KEYS[1], ref)
  local id = ref:sub(14)
  local token = base .. '.' .. i
  lease_grant(KEYS[2], id, token, deadline)
  out[#out + 1] = id
  out[#out + 1] = token
end
return out
