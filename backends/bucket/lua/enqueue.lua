-- enqueue: store new jobs, all or none. A job due now goes straight into the
-- ready ZSET; a delayed one into the bucket of its RunAt window. Members are
-- "<sequence, 12 hex digits>:<id>"; a job's Ref is "<key of the place it
-- was put>|<member>". Writes are gathered by key: one ZADD of ready, one
-- HSET and one ZADD of the index per bucket, one INCRBY of the counter.
-- When claims block, due jobs go to registered waiters first (lib.lua's
-- handoff_new: leased in this call and returned by the waiter's blocked
-- BZPOPMIN; the waiters, inboxes and active index are derived from ready).
--
-- KEYS: [1] ready, [2] bucket index, [3] bucketed-job counter, [4] sequence
--   counter, then the wake-up marker when claims block (ARGV[2] = 5) or not
--   (ARGV[2] = 4), then the bucket of each job not due at now, in order (Go
--   computes them: RunAt > now, as ms_le decides here); the records' keys
--   are derived (lib.lua's read_new_jobs).
-- ARGV: [1] now, [2] number of keys before the buckets, [3..] the
--   read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k log R) for k due jobs, O(k + b log B) for k delayed ones in
--   b buckets.
local ready, index, now = KEYS[1], KEYS[2], ARGV[1]
local fixed = small_num(ARGV[2])
local marker = fixed == 5 and KEYS[5]
local jobs, err = read_new_jobs(3, ready)
if not jobs then return err end
local n = jobs.n
local handed, low = {}, jobs.low
if marker then handed, low = handoff_new(ready, jobs, now, zsets_busy, ready, index, no_ref) end
-- The sequence is taken only for jobs that are queued or bucketed: a
-- handed job gets its Ref when it first goes back (lib.lua's seq_ref_of).
local first = low and redis.call('INCRBY', KEYS[4], num_text(n)) - n
-- One wake at most per batch, for the jobs not handed: when one is due
-- now, or the earliest goes ahead of the head blocked claimers wait for at
-- the latest (the earliest of ready and the bucket scores, read only then).
if batch_wakes(marker, low, now, ready, index) then wake(marker) end
-- Writes are gathered by key: one ZADD of ready, and per bucket one HSET
-- and one ZADD LT of the index, and one INCRBY of the counter, for the
-- whole batch (a ZADD a due job was one command a job).
local due, buckets, order, bucketed = {}, {}, {}, 0
for i = 1, n do
  local id, run_at = jobs.id[i], jobs.at[i]
  local member, place = not handed[i] and seq_member(first + i, id), ready
  if ms_le(run_at, now) then
    if member then
      due[#due + 1] = run_at
      due[#due + 1] = member
    end
  else
    bucketed = bucketed + 1
    place = KEYS[fixed + bucketed]
    local b = buckets[place]
    if not b then
      b = { low = run_at, pairs = {} }
      buckets[place] = b
      order[#order + 1] = place
    end
    b.pairs[#b.pairs + 1] = member
    b.pairs[#b.pairs + 1] = run_at
    if not ms_le(b.low, run_at) then b.low = run_at end
  end
  if not handed[i] then create_job(jobs, i, place .. '|' .. member) end
end
if #due > 0 then zadd_desc(ready, due) end
for _, place in ipairs(order) do
  local b = buckets[place]
  redis.call('HSET', place, unpack(b.pairs))
  redis.call('ZADD', index, 'LT', b.low, place)
end
if bucketed > 0 then redis.call('INCRBY', KEYS[3], num_text(bucketed)) end
return n
