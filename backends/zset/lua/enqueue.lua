-- enqueue: store new jobs and index them by RunAt, all or none. The ZSET
-- member (the job's Ref) is a seq_member, so jobs with the same RunAt keep
-- enqueue order. When claims block, due jobs go to registered waiters
-- first (lib.lua's handoff_new: leased in this call, returned by the
-- waiter's blocked BZPOPMIN), and a claimer is woken at most once per batch
-- for the rest: when one of them is due now, or the earliest goes ahead of
-- the head (lib.lua's batch_wakes, which reads the head only then).
--
-- KEYS: [1] queue ZSET; the sequence counter, the wake-up marker, the
--   records' keys, the waiters, their inboxes and the active index are
--   derived from it (lib.lua's seq_key, wake_key, read_new_jobs,
--   handoff_new): a key sent cost about 1,100 instructions under callgrind.
-- ARGV: now, '1' when claims block (there is a marker) else '0', then the
--   read_new_jobs layout.
-- Returns: the number of jobs stored, or an AE_DUPLICATE error (none stored).
-- Complexity: O(k log N) for k jobs.
local marker = ARGV[2] == '1' and wake_key(KEYS[1])
local jobs, err = read_new_jobs(3, KEYS[1])
if not jobs then return err end
local n = jobs.n
local handed, low = {}, jobs.low
if marker then handed, low = handoff_new(KEYS[1], jobs, ARGV[1], zsets_busy, KEYS[1], nil, no_ref) end
if batch_wakes(marker, low, ARGV[1], KEYS[1]) then wake(marker) end
local add, ids, ats, m = {}, jobs.id, jobs.at, 0
-- The sequence is taken only for jobs that are queued: a handed job gets
-- its Ref when it first goes back to the queue (lib.lua's seq_ref_of).
local first = low and redis.call('INCRBY', seq_key(KEYS[1]), num_text(n)) - n
for i = n, 1, -1 do -- descending: lib.lua's zadd_desc
  if not handed[i] then
    local ref = seq_member(first + i, ids[i])
    create_job(jobs, i, ref)
    add[m + 1], add[m + 2], m = ats[i], ref, m + 2
  end
end
if m > 0 then redis.call('ZADD', KEYS[1], unpack(add)) end
return n
