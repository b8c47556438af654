--[[
  Finish an active job: remove it from the active list and write its
  outcome, or change nothing when it is no longer active (finished already).

  KEYS[1] active list
  KEYS[2] the job's record (HASH)
  KEYS[3] the counter to increment (done or dead)
  ARGV[1] the job id
  ARGV[2..] field, value pairs to set on the record

  Output: 1 finished, 0 not active
]]
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('INCR', KEYS[3])
return 1
