-- Record access, hash encoding (seed 001): one hash field per Job field.
-- Every function takes the record's key, which the caller passed in KEYS.

-- rec_get returns the named fields' values in order (false where missing).
local function rec_get(key, ...)
  return redis.call('HMGET', key, ...)
end

-- rec_set writes field/value pairs.
local function rec_set(key, ...)
  redis.call('HSET', key, ...)
end

-- rec_create writes a new record from a flat list of field/value pairs.
local function rec_create(key, pairs)
  redis.call('HSET', key, unpack(pairs))
end

-- rec_read returns the whole record in the form the Go decoder takes.
local function rec_read(key)
  return redis.call('HGETALL', key)
end

local function rec_exists(key)
  return redis.call('EXISTS', key) == 1
end
