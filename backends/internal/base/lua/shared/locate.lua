-- locate: where each job's record sits, for the harness's read-back after a
-- run (jobstore.Locator). A record still open is reachable when a claim, a
-- mover or Recover will find it: held under a lease in the active index,
-- or waiting where its Ref points, a member of one of the index KEYS (a
-- queue or delayed ZSET, or a stream entry a claim will still read:
-- lib_stream.lua's stream_unread), or, for a Ref
-- "<key>|<member>" (bucket's), a member of that key, ZSET or HASH. Record
-- keys are derived from the active index's key (job_prefix).
--
-- KEYS: [1] active index, [2..] the indexes a waiting job's Ref may name.
-- ARGV: job ids.
-- Returns: per id {status or '', 1 reachable or 0}: '' is no record.
-- Complexity: O(log N) per id, one record read each; each index's TYPE is read
--   once per call.
local active = KEYS[1]
local prefix = job_prefix(active)

local types, last = {}, {}
local function in_key(k, m)
  local t = types[k]
  if not t then
    t = redis.call('TYPE', k)['ok']
    types[k] = t
  end
  if t == 'zset' then return redis.call('ZSCORE', k, m) ~= false end
  if t == 'hash' then return redis.call('HEXISTS', k, m) == 1 end
  if t == 'stream' and m:match('^%d+%-%d+$') then
    last[k] = last[k] or stream_last_delivered(k)
    return stream_unread(k, m, last[k])
  end
  return false
end

local function waiting_at(ref)
  if not ref or ref == '' then return false end
  local k, m = ref:match('^(.*{[^}]*}:[^|]*)|(.+)$')
  if k then return in_key(k, m) end
  for i = 2, #KEYS do
    if in_key(KEYS[i], ref) then return true end
  end
  return false
end

local out = {}
for i, id in ipairs(ARGV) do
  -- LeaseToken: the field zset-json-client's records still keep.
  local f = rec_get(prefix .. id, 'Status', 'Ref', 'Lease', 'LeaseToken')
  local st, reach = f[1] or '', 0
  local _, _, token = lease_parts(f[3])
  token = token or f[4]
  if st == ST_INPROGRESS then
    if token and redis.call('ZSCORE', active, lease_member(id, token)) then reach = 1 end
  elseif is_waiting(st) then
    if waiting_at(f[2]) then reach = 1 end
  elseif st ~= '' then
    reach = 1 -- finished: nothing to reach
  end
  out[i] = { st, reach }
end
return out
