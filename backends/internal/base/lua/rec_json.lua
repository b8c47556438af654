-- Record access, JSON encoding: the whole record is one JSON object in a
-- string (what seed 001 replaced). Every read decodes and every write
-- re-encodes the whole object; that cost is what this encoding measures.
-- Decoded records (and their JSON text) are cached for the length of one
-- script call.
local rec_cache, rec_text = {}, {}

-- rec_reset empties the cache: a function library's locals outlive one
-- call, and the next call must read what is in Redis.
local function rec_reset() rec_cache, rec_text = {}, {} end

local function rec_load(key)
  local r = rec_cache[key]
  if r == nil then
    local s = redis.call('GET', key)
    if not s then return nil end
    r = cjson.decode(s)
    rec_cache[key], rec_text[key] = r, s
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
  local s = cjson.encode(r)
  rec_cache[key], rec_text[key] = r, s
  redis.call('SET', key, s, 'KEEPTTL')
end

local function rec_create(key, status, ref, run_at, payload, from, to, lease)
  local r = { Status = status, Ref = ref, RunAt = run_at, Lease = lease }
  if payload ~= '' then r.Payload = payload end
  for i = from, to, 2 do r[ARGV[i]] = ARGV[i + 1] end
  local s = cjson.encode(r)
  rec_cache[key], rec_text[key] = r, s
  redis.call('SET', key, s)
end

-- rec_snapshot returns the record's JSON text and its Status; nil when the
-- record is missing.
local function rec_snapshot(key)
  local r = rec_load(key)
  if not r then return nil end
  return rec_text[key], r.Status
end

-- rec_snap_field reads field f of a record rec_snapshot returned.
local function rec_snap_field(key, rec, f)
  return (rec_load(key) or {})[f]
end

local function rec_exists(key)
  return redis.call('EXISTS', key) == 1
end
