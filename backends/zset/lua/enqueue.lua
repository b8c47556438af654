-- enqueue: store new jobs and index them by RunAt, all or none.
-- KEYS[1] queue ZSET, KEYS[2] sequence counter, KEYS[3..] records.
-- ARGV: the read_new_jobs layout. The ZSET member (the job's Ref) is a
-- seq_member, so jobs with the same RunAt keep enqueue order.
local jobs, err = read_new_jobs(1, 3)
if not jobs then return err end
local first = redis.call('INCRBY', KEYS[2], #jobs) - #jobs
for i, job in ipairs(jobs) do
  local ref = seq_member(first + i, job.id)
  create_job(job, ref)
  redis.call('ZADD', KEYS[1], job.run_at, ref)
end
return #jobs
