-- seed002_recover: SEED VARIANT (seed 002), not the corrected Recover. The
-- seed's recovery script: it declares no keys, SCANs the whole keyspace for
-- job records (MATCH <prefix>job:*, COUNT 100) and builds every key name it
-- touches (the queue, the active index, the dead set) in Lua. Its cost
-- grows with every key in Redis, not with the jobs to recover, and on a
-- Redis Cluster it sees only the keys of the node it runs on. A job is
-- taken back when InProgress with its lease deadline passed (the timeout
-- from StartedAt is the separate workers.recovery_mode seed): it is retried
-- at once or dead-lettered.
--
-- With ARGV[5] 'unix' (variant seed002-formats) it also writes what the
-- seed's script writes into the record's dates (lines 283-291 and the dead
-- branch after them): RetryDelayUntil and LastUpdatedAt as Unix seconds
-- (TIME's), where seed 001's HashToJob parses those fields as dates (lines
-- 84 and 89: DateTime.Parse, DateTimeOffset.Parse, which throw on a Unix
-- number).
--
-- KEYS: none.
-- ARGV: the queue's key prefix ("ae:{queue}:"), now, retention ms, the most
--   jobs to take back (the contract's max; the seed has none), 'unix' or ''.
-- Returns: {requeued ids, dead-lettered ids}.
-- Complexity: O(K) for K keys in the whole keyspace (SCAN), the seed's flaw.
local prefix, now = ARGV[1], ARGV[2]
local queue, active, dead = prefix .. 'queue', prefix .. 'active', prefix .. 'dead'
local requeued, dead_ids = {}, {}
local max = tonumber(ARGV[4])
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', prefix .. 'job:*', 'COUNT', 100)
  cursor = r[1]
  for _, key in ipairs(r[2]) do
    local f = rec_get(key, 'Status', 'Lease', 'Ref')
    local deadline, _, token = lease_parts(f[2])
    if f[1] == ST_INPROGRESS and deadline and tonumber(deadline) <= tonumber(now) and #requeued + #dead_ids < max then
      local id = key:sub(#prefix + 5)
      redis.call('ZREM', active, lease_member(id, token))
      local secs = tostring(math.floor(tonumber(now) / 1000))
      if retry_or_dead(dead, key, id, now, 'lease expired', now, ARGV[3]) then
        redis.call('ZADD', queue, now, f[3])
        requeued[#requeued + 1] = id
        if ARGV[5] == 'unix' then redis.call('HSET', key, 'RetryDelayUntil', secs, 'LastUpdatedAt', secs) end
      else
        dead_ids[#dead_ids + 1] = id
        if ARGV[5] == 'unix' then redis.call('HSET', key, 'LastUpdatedAt', secs) end
      end
    end
  end
until cursor == '0'
return { requeued, dead_ids }
