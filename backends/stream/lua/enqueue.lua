-- enqueue: store new jobs and append each to the stream, due or not (a
-- stream has no place for delayed jobs), all or none.
--
-- KEYS: [1] stream (the records' keys are derived: read_new_jobs).
-- ARGV: now, then the read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k) for k jobs.
local jobs, err = read_new_jobs(2, KEYS[1])
if not jobs then return err end
for i = 1, jobs.n do
  local payload, extra = new_job_view(jobs, i)
  create_job(jobs, i, stream_place(KEYS[1], nil, nil, jobs.id[i], jobs.at[i], ARGV[1], nil, payload, extra))
end
return jobs.n
