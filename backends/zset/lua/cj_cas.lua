-- cj_cas: the client-side JSON store's write (clientjson.go). The client
-- read the record (GET), decoded it, changed it and sends it back whole:
-- it is written only if the record still holds the JSON the client read
-- (the compare-and-set AsyncEndpoints does with a transaction condition),
-- and then, in the same call, the index changes the operation needs:
--   claim    token deadline      ZREM queue id, ZADD active deadline id|token
--   extend   token deadline      ZADD active XX deadline id|token
--   complete token retention_ms  ZREM active id|token, PEXPIRE, INCR completed
--   retry    token run_at        ZREM active id|token, ZADD queue run_at id
--   dead     token now retention ZREM active id|token, ZADD dead now id, PEXPIRE
--   cancel   retention_ms        ZREM queue id, PEXPIRE
--
-- KEYS: [1] record, [2] queue ZSET, [3] active index, [4] dead ZSET, [5]
--   completed counter.
-- ARGV: old JSON, new JSON, op, id, then per op the values above.
-- Returns: 1 when written, 0 when the record changed since the client read it
--   (or is gone).
-- Complexity: O(log N) plus the record's length.
local key, queue, active, dead, completed = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, id = ARGV[3], ARGV[4]
if redis.call('GET', key) ~= ARGV[1] then return 0 end
redis.call('SET', key, ARGV[2], 'KEEPTTL')
if op == 'claim' then
  redis.call('ZREM', queue, id)
  redis.call('ZADD', active, ARGV[6], lease_member(id, ARGV[5]))
elseif op == 'extend' then
  redis.call('ZADD', active, 'XX', ARGV[6], lease_member(id, ARGV[5]))
elseif op == 'complete' then
  redis.call('ZREM', active, lease_member(id, ARGV[5]))
  redis.call('PEXPIRE', key, ARGV[6])
  redis.call('INCR', completed)
elseif op == 'retry' then
  redis.call('ZREM', active, lease_member(id, ARGV[5]))
  redis.call('ZADD', queue, ARGV[6], id)
elseif op == 'dead' then
  redis.call('ZREM', active, lease_member(id, ARGV[5]))
  redis.call('ZADD', dead, ARGV[6], id)
  redis.call('PEXPIRE', key, ARGV[7])
elseif op == 'cancel' then
  redis.call('ZREM', queue, id)
  redis.call('PEXPIRE', key, ARGV[5])
end
return 1
