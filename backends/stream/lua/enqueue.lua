-- enqueue: store new jobs and append each to the stream, due or not (a
-- stream has no place for delayed jobs), all or none. Due jobs go to
-- registered waiters first when no entry is unread (lib.lua's handoff_new,
-- lib_stream.lua's stream_busy: leased in this call, returned by the
-- waiter's blocked BZPOPMIN, with an empty Ref: in no stream); a job
-- appended wakes a waiter (stream_wake).
--
-- KEYS: [1] stream (the records' keys, the waiters, their inboxes, the
--   marker and the active index are derived: read_new_jobs, handoff_new).
-- ARGV: now, then the read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k) for k jobs.
local jobs, err = read_new_jobs(2, KEYS[1])
if not jobs then return err end
local now = ARGV[1]
local handed = handoff_new(KEYS[1], jobs, now, stream_busy, KEYS[1], nil, no_ref)
local appended = false
for i = 1, jobs.n do
  if not handed[i] then
    local payload, extra = new_job_view(jobs, i)
    create_job(jobs, i, stream_place(KEYS[1], nil, nil, jobs.id[i], jobs.at[i], now, nil, payload, extra))
    appended = true
  end
end
if appended then stream_wake(KEYS[1], now) end
return jobs.n
