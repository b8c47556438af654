-- seed000_enqueue: SEED VARIANT (seed 000's CreateJob, lines 29-64), not the
-- corrected enqueue. A job due now gets one stream entry. A delayed job is
-- a job with a RetryDelayUntil (the seed's only delay), so its record says
-- Scheduled with RetryDelayUntil = RunAt, as AsyncEndpoints writes a job
-- that waits for one; it goes into the delayed ZSET scored in whole seconds
-- (ToUnixTimeSeconds, line 38; kept x 1000 so the corrected Fail and
-- Recover, which score in ms, share the set) under its bare id, and is
-- ALSO added to the stream "for tracking" (lines 41-49), an entry whose
-- status field says "delayed". The batch is written in one call where the
-- seed makes three per job: atomicity is the contract's, not the flaw.
--
-- KEYS: [1] stream, [2] delayed ZSET, [3] audit HASH (the records' keys are
--   derived: read_new_jobs).
-- ARGV: now, then the read_new_jobs layout.
-- Returns: the number of jobs stored.
-- Complexity: O(k log D) for k jobs.
local function seed000_score(ms) return string.format('%d', math.floor(ms / 1000) * 1000) end -- whole seconds, x 1000
local stream, delayed, now = KEYS[1], KEYS[2], tonumber(ARGV[1])
local jobs, err = read_new_jobs(2, KEYS[1])
if not jobs then return err end
local tracking = 0
for i = 1, jobs.n do
  local id, run_at = jobs.id[i], tonumber(jobs.at[i])
  if run_at > now then
    create_job(jobs, i, id)
    rec_set(jobs.key[i], 'Status', ST_SCHEDULED, 'RetryDelayUntil', tostring(run_at))
    redis.call('ZADD', delayed, seed000_score(run_at), id)
    redis.call('XADD', stream, '*', 'id', id, 'status', 'delayed')
    tracking = tracking + 1
  else
    create_job(jobs, i, redis.call('XADD', stream, '*', 'id', id, 'status', ST_QUEUED))
  end
end
if tracking > 0 then redis.call('HINCRBY', KEYS[3], 'tracking_entries', tracking) end
return jobs.n
