-- enqueue: store new jobs, all or none, each where stream_place puts it: the
-- delayed ZSET when not due (or behind a delayed job of the same RunAt),
-- else the stream.
--
-- KEYS: [1] stream, [2] delayed ZSET, [3] its sequence (the records' keys
--   are derived: read_new_jobs).
-- ARGV: now, then the read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k log D) for k jobs (an XADD is O(1)).
local jobs, err = read_new_jobs(2, KEYS[1])
if not jobs then return err end
-- The delayed head, read once per batch, spares a due job the look-up
-- for a delayed twin of its RunAt (stream_place).
local dhead = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2] or false
for i = 1, jobs.n do
  local payload, extra = new_job_view(jobs, i)
  create_job(jobs, i, stream_place(KEYS[1], KEYS[2], KEYS[3], jobs.id[i], jobs.at[i], ARGV[1], dhead, payload, extra))
end
return jobs.n
