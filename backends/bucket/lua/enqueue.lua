-- enqueue: store new jobs, all or none. A job due now goes straight into the
-- ready ZSET; a delayed one into the bucket of its RunAt window.
-- KEYS[1] ready, KEYS[2] bucket index, KEYS[3] bucketed-job counter,
-- KEYS[4] sequence counter, KEYS[5..4+n] records, KEYS[5+n..4+2n] the
-- bucket of each job's RunAt (Go computes it; a due job leaves it unused).
-- ARGV[1] now, ARGV[2..] the read_new_jobs layout.
-- Members are "<sequence, 12 hex digits>:<id>"; a job's Ref is
-- "<key of the place it was put>|<member>".
local ready, index, now = KEYS[1], KEYS[2], tonumber(ARGV[1])
local jobs, err = read_new_jobs(2, 5)
if not jobs then return err end
local first = redis.call('INCRBY', KEYS[4], #jobs) - #jobs
for i, job in ipairs(jobs) do
  local member, place = seq_member(first + i, job.id), ready
  if job.run_at <= now then
    redis.call('ZADD', ready, job.run_at, member)
  else
    place = KEYS[4 + #jobs + i]
    redis.call('HSET', place, member, job.run_at)
    redis.call('ZADD', index, 'LT', job.run_at, place)
    redis.call('INCR', KEYS[3])
  end
  create_job(job, place .. '|' .. member)
end
return #jobs
