-- enqueue: store new jobs and index them by RunAt, all or none. The ZSET
-- member (the job's Ref) is a seq_member, so jobs with the same RunAt keep
-- enqueue order. A claimer is woken at most once per batch: when a job is
-- due now, or the earliest one goes ahead of the head (lib.lua's
-- batch_wakes, which reads the head only then).
--
-- KEYS: [1] queue ZSET, [2] sequence counter, then the wake-up marker when
--   claims block (ARGV[2] = 3) or not (ARGV[2] = 2); the records' keys are
--   derived (lib.lua's read_new_jobs).
-- ARGV: now, number of keys, then the read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k log N) for k jobs.
local fixed = tonumber(ARGV[2])
local marker = fixed == 3 and KEYS[3]
local jobs, err = read_new_jobs(3, KEYS[1])
if not jobs then return err end
if batch_wakes(marker, jobs.low, ARGV[1], KEYS[1]) then wake(marker) end
local n = jobs.n
local first = redis.call('INCRBY', KEYS[2], n) - n
local add, ids, ats = {}, jobs.id, jobs.at
for i = 1, n do
  local ref = seq_member(first + i, ids[i])
  create_job(jobs, i, ref)
  add[2 * (n - i) + 1], add[2 * (n - i) + 2] = ats[i], ref -- descending: lib.lua's zadd_desc
end
redis.call('ZADD', KEYS[1], unpack(add))
return n
