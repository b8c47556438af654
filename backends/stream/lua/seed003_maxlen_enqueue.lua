-- seed003_maxlen_enqueue: SEED VARIANT (seed 003's MAXLEN, line 256), not
-- the corrected enqueue: store new jobs and append each to the stream with
-- XADD MAXLEN ~ maxlen, which deletes the stream's oldest entries, read by
-- the group or not, once it holds more. All or none, like the corrected one.
--
-- KEYS: [1] stream (the records' keys are derived: read_new_jobs).
-- ARGV: now, maxlen, then the read_new_jobs layout.
-- Returns: the number of jobs stored.
-- Complexity: O(k) for k jobs, plus the entries trimmed.
local jobs, err = read_new_jobs(3, KEYS[1])
if not jobs then return err end
for i = 1, jobs.n do
  create_job(jobs, i, redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'id', jobs.id[i]))
end
return jobs.n
