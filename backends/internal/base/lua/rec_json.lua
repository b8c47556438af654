-- Record access, JSON encoding: the whole record is one JSON object in a
-- string (what seed 001 replaced). Every read decodes and every write
-- re-encodes the whole object; that cost is what this encoding measures.
-- Decoded records are cached for the length of one script call.
local rec_cache = {}

local function rec_load(key)
  local r = rec_cache[key]
  if r == nil then
    local s = redis.call('GET', key)
    if not s then return nil end
    r = cjson.decode(s)
    rec_cache[key] = r
  end
  return r
end

local function rec_get(key, ...)
  local r = rec_load(key) or {}
  local out = {}
  for i, f in ipairs({...}) do
    local v = r[f]
    if v == nil then v = false end
    out[i] = v
  end
  return out
end

local function rec_set(key, ...)
  local r = rec_load(key) or {}
  local a = {...}
  for i = 1, #a, 2 do r[a[i]] = a[i + 1] end
  rec_cache[key] = r
  redis.call('SET', key, cjson.encode(r), 'KEEPTTL')
end

local function rec_create(key, pairs)
  local r = {}
  for i = 1, #pairs, 2 do r[pairs[i]] = pairs[i + 1] end
  rec_cache[key] = r
  redis.call('SET', key, cjson.encode(r))
end

local function rec_read(key)
  return redis.call('GET', key)
end

local function rec_exists(key)
  return redis.call('EXISTS', key) == 1
end
