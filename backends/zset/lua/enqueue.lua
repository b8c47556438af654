-- enqueue: store new jobs and index them by RunAt, all or none.
-- KEYS[1] queue ZSET, KEYS[2] sequence counter, then the wake-up marker when
-- claims block (ARGV[2] = 3) or not (ARGV[2] = 2), then the records.
-- ARGV: now, number of keys before the records, then the read_new_jobs
-- layout. The ZSET member (the job's Ref) is a seq_member, so jobs with the
-- same RunAt keep enqueue order.
local fixed = tonumber(ARGV[2])
local marker = fixed == 3 and KEYS[3]
local jobs, err = read_new_jobs(3, fixed + 1)
if not jobs then return err end
local first = redis.call('INCRBY', KEYS[2], #jobs) - #jobs
for i, job in ipairs(jobs) do
  local ref = seq_member(first + i, job.id)
  create_job(job, ref)
  zadd_wake(KEYS[1], marker, job.run_at, ref, ARGV[1])
end
return #jobs
