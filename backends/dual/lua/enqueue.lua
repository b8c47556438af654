-- enqueue: store new jobs, all or none, each where stream_place puts it: the
-- delayed ZSET when not due (or behind a delayed job of the same RunAt),
-- else the stream. Due jobs go to registered waiters first when nothing
-- due waits ahead of them (lib.lua's handoff_new, lib_stream.lua's
-- stream_busy: leased in this call, returned by the waiter's blocked
-- BZPOPMIN, Ref ''); a due job placed in the stream wakes a waiter
-- (stream_wake).
--
-- KEYS: [1] stream, [2] delayed ZSET, [3] its sequence (the records' keys,
--   the waiters, their inboxes, the marker and the active index are
--   derived: read_new_jobs, handoff_new).
-- ARGV: now, then the read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k log D) for k jobs (an XADD is O(1)).
local jobs, err = read_new_jobs(2, KEYS[1])
if not jobs then return err end
local now = ARGV[1]
local handed = handoff_new(KEYS[1], jobs, now, stream_busy, KEYS[1], KEYS[2], no_ref)
-- The delayed head, read once per batch, spares a due job the look-up
-- for a delayed twin of its RunAt (stream_place).
local dhead = redis.call('ZRANGE', KEYS[2], '0', '0', 'WITHSCORES')[2] or false
local woke = false
for i = 1, jobs.n do
  if not handed[i] then
    local payload, extra = new_job_view(jobs, i)
    create_job(jobs, i, stream_place(KEYS[1], KEYS[2], KEYS[3], jobs.id[i], jobs.at[i], now, dhead, payload, extra))
    if not woke and ms_le(jobs.at[i], now) then
      stream_wake(KEYS[1], now)
      woke = true
    end
  end
end
return jobs.n
