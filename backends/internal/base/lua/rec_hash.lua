-- Record access, hash encoding (seed 001): one hash field per Job field.

-- rec_reset forgets what an earlier call left behind (nothing, for hashes):
-- a function library's locals outlive one call.
local function rec_reset() end

-- rec_get returns the named fields' values in order (false where missing).
local function rec_get(key, ...)
  return redis.call('HMGET', key, ...)
end

-- rec_set writes field/value pairs.
local function rec_set(key, ...)
  redis.call('HSET', key, ...)
end

-- rec_create writes a new record: Status, Ref, RunAt, Payload (left out
-- when empty), Lease when given, and the field/value pairs in
-- ARGV[from..to], in one HSET that reads them straight from ARGV. (No
-- write tells a hash that exists apart without overwriting it, so
-- read_new_jobs checks that none exists first: a batch is all or nothing.)
local function rec_create(key, status, ref, run_at, payload, from, to, lease)
  if lease then
    if payload == '' then
      redis.call('HSET', key, 'Status', status, 'Ref', ref, 'RunAt', run_at, 'Lease', lease, unpack(ARGV, from, to))
    else
      redis.call('HSET', key, 'Status', status, 'Ref', ref, 'RunAt', run_at, 'Payload', payload, 'Lease', lease,
        unpack(ARGV, from, to))
    end
  elseif payload == '' then
    redis.call('HSET', key, 'Status', status, 'Ref', ref, 'RunAt', run_at, unpack(ARGV, from, to))
  else
    redis.call('HSET', key, 'Status', status, 'Ref', ref, 'RunAt', run_at, 'Payload', payload, unpack(ARGV, from, to))
  end
end

-- rec_snapshot returns the whole record, in the form the Go decoder takes,
-- and its Status; nil when the record is missing.
local function rec_snapshot(key)
  local r = redis.call('HGETALL', key)
  for i = 1, #r, 2 do
    if r[i] == 'Status' then return r, r[i + 1] end
  end
  return nil
end

-- rec_snap_field reads field f out of what rec_snapshot returned.
local function rec_snap_field(key, rec, f)
  for i = 1, #rec, 2 do
    if rec[i] == f then return rec[i + 1] end
  end
  return nil
end

local function rec_exists(key)
  return redis.call('EXISTS', key) == 1
end
