-- cj_create: the client-side JSON store's CreateJob (clientjson.go): store
-- records the client encoded, all or none, and index each in the queue by
-- RunAt under its bare id (AsyncEndpoints' JSON RedisJobStore: SET of the
-- serialized job, then ZADD of its id).
--
-- KEYS: [1] queue ZSET, [2..] records.
-- ARGV: per job id, runAt, JSON.
-- Returns: the number of jobs stored, or AE_DUPLICATE before any write.
-- Complexity: O(k log N) for k jobs.
local seen = {}
for i = 1, #ARGV, 3 do
  if seen[ARGV[i]] or redis.call('EXISTS', KEYS[1 + (i + 2) / 3]) == 1 then return err_duplicate(ARGV[i]) end
  seen[ARGV[i]] = true
end
for i = 1, #ARGV, 3 do
  redis.call('SET', KEYS[1 + (i + 2) / 3], ARGV[i + 2])
  redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
end
return #ARGV / 3
