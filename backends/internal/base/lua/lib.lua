-- Shared by every backend's scripts. The store loads, once per server, one
-- function library made of the record prelude of its encoding (rec_hash.lua
-- or rec_json.lua), this file, lib_stream.lua (the streams' part) and every
-- script body of the backend (see base's scripts.go); a server without
-- Functions gets the same parts as one script per body. Times are Unix
-- milliseconds from the store's clock, passed in ARGV; nothing here reads
-- Redis TIME.

local ST_QUEUED, ST_SCHEDULED, ST_INPROGRESS = '100', '200', '300'
local ST_COMPLETED, ST_FAILED, ST_CANCELED = '400', '500', '600'

-- Error replies the Go side maps to jobstore's sentinel errors.
local function err_lease_lost(id) return redis.error_reply('AE_LEASE_LOST ' .. id) end
local function err_not_found(id) return redis.error_reply('AE_NOT_FOUND ' .. id) end
local function err_duplicate(id) return redis.error_reply('AE_DUPLICATE ' .. id) end
local function err_not_cancelable(id, st) return redis.error_reply('AE_NOT_CANCELABLE ' .. id .. ' status ' .. tostring(st)) end

-- memoized(f) is f with its results kept for the library's life (its
-- locals outlive a call), for the few values a hot path converts again and
-- again. small_num is tonumber for the small counts a layout repeats (a
-- job's number of field pairs); num_text is tostring for a token's
-- "<base>.<i>", which would otherwise format i with printf in every claim.
local function memoized(f)
  local kept = {}
  return function(x)
    local v = kept[x]
    if v == nil then
      v = f(x)
      kept[x] = v
    end
    return v
  end
end
-- (tonumber and tostring are named inside functions: a library's load may
-- not reach them.)
local small_num = memoized(function(s) return tonumber(s) end)
local num_text = memoized(function(i) return tostring(i) end)

-- Derived record keys. A claim cannot know which jobs it takes before it
-- runs, so it cannot declare their records in KEYS without a round trip of
-- its own (the old pop, then activate). Claim scripts therefore build the
-- record key of a job they took from the queue key they were given: the
-- same "ae:{queue}:" prefix, so the same hash tag and the same Cluster slot,
-- which Redis Cluster accepts for keys a script did not declare (as BullMQ's
-- and asynq's scripts do). base.Keys.Job builds the same names in Go. Every
-- other script still receives its record keys in KEYS.
-- queue_prefix is "ae:{queue}:" out of any key of the queue; the names
-- derived from it (job_prefix here, expire_index, lib_stream.lua's
-- stream_voided) are the ones base.Keys builds in Go.
-- They are memoized (so the caches hold a few names a queue): a pattern
-- match and a concatenation cost about 2,300 and 1,000 instructions under
-- callgrind, and a call derived several (ci-cost.yaml).
local queue_prefix = memoized(function(tagged) return tagged:match('^(.-{[^}]*}:)') end)

local job_prefix = memoized(function(tagged) return queue_prefix(tagged) .. 'job:' end)

-- Millisecond times stay text in the scripts. tonumber costs about 1,900
-- instructions under callgrind (Lua parses with strtod), and a Lua number
-- handed to redis.call is formatted with printf, which together were about
-- 5% of a batched job's Redis instructions. ms_le(a, b) is a <= b for the
-- integer texts Go and Redis write (no leading zeros): equal lengths, both
-- non-negative (a digit sorts after '/', '-' before it), compare as text.
local function ms_le(a, b)
  if #a == #b and a > '/' and b > '/' then return a <= b end
  return tonumber(a) <= tonumber(b)
end

-- ms_plus(t, d) is t + d for a millisecond time t and a duration d, both
-- integer texts (d non-negative, few distinct: a lease, a retention), as
-- text. tonumber of both, the addition and string.format cost about 9,000
-- instructions under callgrind (two strtod and a printf); here the last
-- three digits of t are added to d as numbers, and the thousands above
-- them are formatted again only when they or the carry change (once a
-- second): about 2,000.
local DEC3 = memoized(function(n) return string.format('%03d', n) end)
local plus_hi, plus_carry, plus_out = nil, nil, nil
local function ms_plus(t, d)
  local dn = small_num(d)
  if #t < 4 or t < '1' or dn ~= dn - dn % 1 then return string.format('%.0f', tonumber(t) + dn) end
  local b1, b2, b3 = t:byte(-3, -1)
  local lo = b1 * 100 + b2 * 10 + b3 - 5328 + dn -- 5328: '0' (48) times 111
  local rem = lo % 1000
  local hi, carry = t:sub(1, -4), (lo - rem) / 1000
  if hi ~= plus_hi or carry ~= plus_carry then
    plus_hi, plus_carry, plus_out = hi, carry, string.format('%.0f', tonumber(hi) + carry)
  end
  return plus_out .. DEC3(rem)
end

-- read_new_jobs parses the enqueue layout that base.EnqueueArgs writes, from
-- ARGV[at]: n, then per job: id, runAt, payload, npairs, then npairs
-- field/value pairs (the record's other fields). The records' keys are
-- derived from tagged, a key of the queue (job_prefix), as a claim's are:
-- a key a job sent in KEYS cost about 1,100 instructions to send, parse and
-- push, a derived one 500. It fails the whole call, before any write, when
-- a job already exists (a batch that names a job twice never gets here:
-- base.EnqueueArgs refuses it). One EXISTS of every record key serves the
-- whole batch (the keys share a hash tag, so one slot): an EXISTS a job
-- was one command a job of the five or six a job costs; the job that
-- exists is looked up only then. It returns the jobs as columns,
-- jobs.id[i], jobs.at[i] (RunAt as the text Go sent), jobs.key[i],
-- jobs.arg[i] (where the job's payload is in ARGV; its pairs follow, up to
-- jobs.to[i]), and
-- jobs.low, the batch's earliest RunAt: a table a job cost about 2,700
-- instructions, a column entry about 150.
local function read_new_jobs(at, tagged)
  local n, prefix = small_num(ARGV[at]), job_prefix(tagged)
  local ids, ats, keys, args, tos = {}, {}, {}, {}, {}
  local low
  at = at + 1
  for i = 1, n do
    local id, run_at = ARGV[at], ARGV[at + 1]
    local to = at + 3 + small_num(ARGV[at + 3]) * 2
    ids[i], ats[i], keys[i], args[i], tos[i] = id, run_at, prefix .. id, at + 2, to
    if not low or not ms_le(low, run_at) then low = run_at end
    at = to + 1
  end
  if n > 0 and redis.call('EXISTS', unpack(keys)) > 0 then
    for i = 1, n do
      if rec_exists(keys[i]) then return nil, err_duplicate(ids[i]) end
    end
  end
  return { n = n, id = ids, at = ats, key = keys, arg = args, to = tos, low = low }
end

-- view_extra is the last item of a claimed job in a claim's reply (view_out):
-- false when the job has no RetryCount and no Name stored, else
-- "<retry count>|<name>".
local function view_extra(retry, name)
  if retry or name then return (retry or '') .. '|' .. (name or '') end
  return false
end

-- new_job_view returns job i's payload and view_extra (its Name, read out
-- of its pairs: a new job has no RetryCount) for a stream entry.
local function new_job_view(jobs, i)
  local a = jobs.arg[i]
  for k = a + 2, jobs.to[i], 2 do
    if ARGV[k] == 'Name' then return ARGV[a], view_extra(nil, ARGV[k + 1]) end
  end
  return ARGV[a], false
end

-- create_job writes job i of a read_new_jobs batch: the producer's fields
-- (RunAt, Payload and the pairs after it in ARGV) plus Status Queued and the
-- backend's Ref (its handle on the job in its own index); with lease (a
-- lease_field), Status InProgress and that Lease instead, as claim_record
-- would write them after (handoff_new: one write of the record, not two).
local function create_job(jobs, i, ref, lease)
  local a = jobs.arg[i]
  rec_create(jobs.key[i], lease and ST_INPROGRESS or ST_QUEUED, ref, jobs.at[i], ARGV[a], a + 2, jobs.to[i], lease)
end

-- Leases. The active index (a ZSET scored by lease deadline) holds one member
-- "<id>|<token>" per claim. A lease is held exactly while its member is
-- there, so every fenced write checks one ZSCORE, and Recover takes a job
-- back by removing the member: whoever removes it wins, once.
local function lease_member(id, token) return id .. '|' .. token end

local function lease_split(member)
  local i = member:match('^.*()|')
  return member:sub(1, i - 1), member:sub(i + 1)
end

local function lease_held(active, id, token)
  return redis.call('ZSCORE', active, lease_member(id, token)) ~= false
end

local function lease_grant(active, id, token, deadline)
  redis.call('ZADD', active, deadline, lease_member(id, token))
end

local function lease_release(active, id, token)
  return redis.call('ZREM', active, lease_member(id, token)) == 1
end

local function is_waiting(status)
  return status == ST_QUEUED or status == ST_SCHEDULED
end

-- The record's lease is one field, Lease = "<deadline>|<started>|<token>|
-- <worker>" (times in ms; a token never holds '|', see lease_member; the
-- worker id is last, so it may). A claim writes Status and Lease, two
-- fields where it wrote six (Status, WorkerId, StartedAt, LastUpdatedAt,
-- LeaseToken, LeaseDeadline); base.DecodeRecord splits it, and reads
-- LastUpdatedAt as the latest of the record's times when no later write
-- set it.
local function lease_field(token, deadline, started, worker)
  return deadline .. '|' .. started .. '|' .. token .. '|' .. worker
end

-- lease_parts splits a Lease field: deadline, started, token, worker (nil
-- when the record has none).
local function lease_parts(s)
  if not s or s == '' then return nil end
  return s:match('^([^|]*)|([^|]*)|([^|]*)|(.*)$')
end

-- The claim view: what a worker needs of a job it claimed, and all a claim
-- reads of its record: Status (is it still waiting?), Payload, RetryCount
-- (its attempt) and Name (what to run it as), one HMGET of four fields.
-- Until 2026-11-27 a claim read the whole record (HGETALL, about 430 bytes
-- out a job) and returned it; the rest is Get's (jobstore's Claimed).
local function claim_view(key)
  return rec_get(key, 'Status', 'Payload', 'RetryCount', 'Name')
end

-- view_out appends a claimed job to a claim's reply as base.DecodeClaimed
-- reads it: id, token, payload (false: none), then false when the job has
-- no RetryCount and no Name stored (a first run of an unnamed job), else
-- "<retry count>|<name>". Four items a job: an item cost about 600
-- instructions to build and send.
local function view_out_x(out, id, token, payload, extra)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = id, token, payload, extra
end

local function view_out(out, id, token, payload, retry, name)
  view_out_x(out, id, token, payload, view_extra(retry, name))
end

-- claim_record writes what a claim changes in a record: Status and Lease.
local function claim_record(key, token, worker, now, deadline)
  rec_set(key, 'Status', ST_INPROGRESS, 'Lease', lease_field(token, deadline, now, worker))
end

-- activate puts a record under a lease it already holds (lease, its
-- lease_field) and returns its claim view. A record that is gone or no
-- longer waiting (canceled meanwhile) gives up the lease and returns nil.
local function activate(active, key, id, token, lease)
  local view = claim_view(key)
  if not is_waiting(view[1]) then
    lease_release(active, id, token)
    return nil
  end
  rec_set(key, 'Status', ST_INPROGRESS, 'Lease', lease)
  return view
end

-- activate_all activates the ids a pop leased under token, deriving each
-- record key with prefix (job_prefix), and returns the claimed jobs as
-- view_out lays them out. One Lease field serves the batch.
local function activate_all(active, prefix, ids, token, worker, now, deadline)
  local out, lease = {}, lease_field(token, deadline, now, worker)
  for _, id in ipairs(ids) do
    local view = activate(active, prefix .. id, id, token, lease)
    if view then view_out(out, id, token, view[2], view[3], view[4]) end
  end
  return out
end

-- extend_lease moves a held lease's deadline (a heartbeat).
local function extend_lease(active, key, id, token, now, deadline)
  if not lease_held(active, id, token) then return err_lease_lost(id) end
  redis.call('ZADD', active, 'XX', deadline, lease_member(id, token))
  local _, started, _, worker = lease_parts(rec_get(key, 'Lease')[1])
  rec_set(key, 'Lease', lease_field(token, deadline, started or now, worker or ''), 'LastUpdatedAt', now)
  return deadline
end

-- finish_record marks a record Completed at now with its result; an empty
-- result is not written (a missing field reads as empty, and most
-- handlers return none: one field less to write a job).
local function finish_record(key, result, now)
  if result == '' then
    rec_set(key, 'Status', ST_COMPLETED, 'CompletedAt', now)
  else
    rec_set(key, 'Status', ST_COMPLETED, 'Result', result, 'CompletedAt', now)
  end
end

-- finish_job finishes a held lease without counting it: Completed, result
-- kept for retention_ms. It returns false, changing nothing, when the lease
-- is no longer held.
local function finish_job(active, key, id, token, now, result, retention_ms)
  if not lease_release(active, id, token) then return false end
  finish_record(key, result, now)
  redis.call('PEXPIRE', key, retention_ms)
  return true
end

-- complete_job finishes a held lease and counts it.
local function complete_job(active, completed, key, id, token, now, result, retention_ms)
  if not finish_job(active, key, id, token, now, result, retention_ms) then return err_lease_lost(id) end
  redis.call('INCR', completed)
  return 1
end

-- Expiry without a PEXPIRE a job. CompleteMany does not set a TTL on each
-- record it finishes: it appends one entry for the whole batch, "<time the
-- records may go>|<id>|<id>...", to the queue's expiry list (a LIST named
-- "<prefix>expiring" from a key of the queue, as job_prefix names records;
-- ids hold no '|'), with one RPUSH, and deletes the records of up to twice
-- as many jobs whose entries are due (sweep_expired), so the list never
-- grows while completions go on; Recover sweeps it too (shared/expire.lua),
-- which reaches a queue that has gone quiet. Entries are appended in the
-- store clock's order; one a little out of order (two processes' clocks)
-- only keeps the entries behind it a little longer. A record thus lives
-- from its retention until the next sweep, never less. Until 2026-11-27 the
-- index was a ZSET id -> time: a member a job cost a ZADD (about 5,200
-- instructions under callgrind, about what the PEXPIRE it replaced cost);
-- a list entry a batch costs a few hundred a job. Complete, Fail, Cancel
-- and Recover's dead letters still set a PEXPIRE: they are one job a call.
local expire_index = memoized(function(tagged) return queue_prefix(tagged) .. 'expiring' end)

-- The hand-off's keys (see the hand-off below), derived as expire_index
-- is; base.Keys builds the same names in Go.
local waiters_key = memoized(function(tagged) return queue_prefix(tagged) .. 'waiters' end)
local wake_key = memoized(function(tagged) return queue_prefix(tagged) .. 'wake' end)
local active_key = memoized(function(tagged) return queue_prefix(tagged) .. 'active' end)
local completed_key = memoized(function(tagged) return queue_prefix(tagged) .. 'completed' end)
local seq_key = memoized(function(tagged) return queue_prefix(tagged) .. 'seq' end)
local function inbox_key(tagged, token_base) return queue_prefix(tagged) .. 'inbox:' .. token_base end

-- sweep_expired deletes the records of the expiry list's due entries,
-- oldest first, until max records went (a whole entry at a time, so up to
-- one batch more) or the head is not due; it returns how many went.
local function sweep_expired(index, prefix, now, max)
  local n = 0
  while n < max do
    local e = redis.call('LINDEX', index, '0')
    if not e or not ms_le(e:match('^[^|]*'), now) then break end
    local keys = {}
    for id in e:gmatch('|([^|]+)') do keys[#keys + 1] = prefix .. id end
    if #keys > 0 then redis.call('DEL', unpack(keys)) end
    redis.call('LPOP', index)
    n = n + #keys
  end
  return n
end

-- retire lists finished ids in the expiry list, due at now + retention_ms,
-- and sweeps what is due.
local function retire(tagged, ids, now, retention_ms)
  local index = expire_index(tagged)
  local at = ms_plus(now, retention_ms)
  redis.call('RPUSH', index, at .. '|' .. table.concat(ids, '|'))
  sweep_expired(index, job_prefix(tagged), now, 2 * #ids)
end

-- complete_many is CompleteMany. ARGV[at] is '1' when a result follows
-- each lease, '0' when none does (all empty); from ARGV[at + 1] come per
-- lease its lease member ("<id>|<token>", built by the caller) and its id
-- (and its result). The records' keys are derived from the active index's
-- (job_prefix), as a claim's are: a key a lease sent in KEYS cost about
-- 1,100 instructions a job to send, parse and push, a derived one 500.
-- Each held lease is finished (done(key, id, member) runs after each, for
-- a backend's own index), the completions counted with one INCRBY and the
-- records retired with one RPUSH (retire). The reply is one character per
-- lease, '1' completed, '0' lease lost: one string, where an integer a
-- lease cost about 1,500 instructions a job to build and send. The caller
-- sends no lease twice in a call (base's CompleteManyWith answers a repeat
-- itself), so no table of those seen.
--
-- One ZREM releases every lease of the batch that is held. When it removed
-- them all (the rule: workers complete what they hold), no lease needs a
-- look-up; until 2026-11-27 a ZMSCORE asked first, which cost about 4,200
-- instructions a job (Redis formats each score with printf). When it
-- removed fewer, each lease's record tells whether it was held: held_by.
local function held_by(key, member)
  local f = rec_get(key, 'Status', 'Lease')
  if f[1] ~= ST_INPROGRESS then return false end
  local _, _, token = lease_parts(f[2])
  return token ~= nil and member:sub(-#token - 1) == '|' .. token
end

local function complete_many(active, completed, at, now, retention_ms, done)
  local stride = ARGV[at] == '1' and 3 or 2
  local members, n = {}, 0
  for i = at + 1, #ARGV, stride do
    n = n + 1
    members[n] = ARGV[i]
  end
  if n == 0 then return '' end
  -- Every script that grants, moves or takes a lease writes the active
  -- index and the record together, in the same call: a member is in the
  -- index exactly while its record is InProgress under its token. So the
  -- records say which members the ZREM removed.
  local all = redis.call('ZREM', active, unpack(members)) == n
  local out, ids, prefix = {}, {}, job_prefix(active)
  for j = 1, n do
    local i = at + 1 + (j - 1) * stride
    local id = ARGV[i + 1]
    local key = prefix .. id
    if all or held_by(key, members[j]) then
      finish_record(key, stride == 3 and ARGV[i + 2] or '', now)
      ids[#ids + 1] = id
      out[j] = '1'
      if done then done(key, id, members[j]) end
    else
      out[j] = '0'
    end
  end
  if #ids > 0 then
    redis.call('INCRBY', completed, num_text(#ids))
    retire(active, ids, now, retention_ms)
  end
  return table.concat(out)
end

-- retry_or_dead records a failure (from Fail, or an expired lease found by
-- Recover) and decides: while RetryCount < MaxRetries the job is Scheduled at
-- run_at with RetryCount+1 and no WorkerId (no worker holds it: seed 002's
-- recovery clears it too, and seed 000's claim refuses a job that has one) and the function returns true, so the caller puts
-- it back in its index; otherwise the job is dead-lettered (Failed, in the
-- dead ZSET, record kept for retention_ms) and it returns false.
local function retry_or_dead(dead, key, id, now, reason, run_at, retention_ms)
  local f = rec_get(key, 'RetryCount', 'MaxRetries', 'Lease')
  local rc, max = tonumber(f[1]) or 0, tonumber(f[2]) or 0
  if rc < max then
    local w = { 'Status', ST_SCHEDULED, 'RetryCount', tostring(rc + 1), 'Error', reason,
      'RunAt', run_at, 'RetryDelayUntil', run_at, 'LastUpdatedAt', now }
    local deadline, started, token = lease_parts(f[3])
    if deadline then -- the last claim's lease stays readable, without its worker
      w[#w + 1] = 'Lease'
      w[#w + 1] = lease_field(token, deadline, started, '')
    end
    rec_set(key, unpack(w))
    return true
  end
  rec_set(key, 'Status', ST_FAILED, 'Error', reason, 'CompletedAt', now, 'LastUpdatedAt', now)
  redis.call('ZADD', dead, now, id)
  redis.call('PEXPIRE', key, retention_ms)
  return false
end

-- cancel_job cancels a waiting record and returns its Ref so the caller can
-- take it out of its index, or an error reply.
local function cancel_job(key, id, now, retention_ms)
  local f = rec_get(key, 'Status', 'Ref')
  if not f[1] then return nil, err_not_found(id) end
  if not is_waiting(f[1]) then return nil, err_not_cancelable(id, f[1]) end
  rec_set(key, 'Status', ST_CANCELED, 'CompletedAt', now, 'LastUpdatedAt', now)
  redis.call('PEXPIRE', key, retention_ms)
  return f[2]
end

-- fail_job is Fail for every backend: the lease must be held; the job is
-- then retried at run_at (place(key, id, run_at) puts it back in the
-- backend's index) or dead-lettered. Returns {status, run_at}.
local function fail_job(active, dead, key, id, token, now, reason, run_at, retention_ms, place)
  if not lease_release(active, id, token) then return err_lease_lost(id) end
  if retry_or_dead(dead, key, id, now, reason, run_at, retention_ms) then
    place(key, id, run_at)
    return { tonumber(ST_SCHEDULED), run_at }
  end
  return { tonumber(ST_FAILED), now }
end

-- return_handed puts back a job an enqueue handed to a claimer that never
-- received it: the item handoff_give put in the claimer's inbox (derived
-- from the lease's token: "<token base>.<i>") is still there at score 0,
-- unpopped, so no block took it (the claimer died registered). The job
-- goes back to Queued with its RetryCount unchanged, since no attempt was
-- made, and the inbox goes, so that a claimer that comes back late finds
-- nothing. The item and its copy give way to RETURNED (scored 2, the
-- inbox keeping its expiry), so that the other jobs of the same item, in
-- this call or a later one, are returned too, and a claimer that comes
-- back late pops RETURNED, which holds no job (base's decodeHandoff). A
-- job whose item was popped (received, by the claimer's block or its
-- leave) is its claimer's, and expires as any claimed job. False: not a
-- hand-off, or received, or the inbox expired (handoff_give).
local RETURNED = 'returned'
local function return_handed(active, key, token, now)
  local base = token:match('^(.*)%.[^.]*$')
  if not base then return false end
  local inbox = inbox_key(active, base)
  if redis.call('ZCOUNT', inbox, '0', '0') == 0 then
    if not redis.call('ZSCORE', inbox, RETURNED) then return false end
  else
    redis.call('ZADD', inbox, '2', RETURNED) -- first, so the key and its expiry stay
    redis.call('ZREMRANGEBYSCORE', inbox, '0', '1')
  end
  local deadline, started = lease_parts(rec_get(key, 'Lease')[1])
  rec_set(key, 'Status', ST_QUEUED, 'Lease', lease_field(token, deadline or '', started or '', ''), 'LastUpdatedAt', now)
  return true
end

-- recover_leases is Recover for every backend. ARGV[at..] are lease members
-- the caller read from the active index as expired; job i's record is
-- KEYS[first_key + i - 1]. A member still in the index with a deadline at or
-- before now is taken (ZREM decides the one winner among recoverers), and
-- its job retried at once or dead-lettered, or, when its claimer never
-- touched it after a hand-off, returned due at once without an attempt
-- (return_handed). Returns {requeued, dead, returned} ids.
local function recover_leases(active, dead, first_key, at, now, retention_ms, place)
  local requeued, dead_ids, returned = {}, {}, {}
  for i = at, #ARGV do
    local member = ARGV[i]
    local key = KEYS[first_key + i - at]
    local score = redis.call('ZSCORE', active, member)
    if score and ms_le(score, now) and redis.call('ZREM', active, member) == 1 then
      local id, token = lease_split(member)
      if rec_exists(key) then
        if return_handed(active, key, token, now) then
          place(key, id, now)
          returned[#returned + 1] = id
        elseif retry_or_dead(dead, key, id, now, 'lease expired', now, retention_ms) then
          place(key, id, now)
          requeued[#requeued + 1] = id
        else
          dead_ids[#dead_ids + 1] = id
        end
      end
    end
  end
  return { requeued, dead_ids, returned }
end

-- zadd_desc is ZADD of score, member pairs given in ascending order, sent
-- in descending order. A small ZSET (up to zset-max-listpack-entries, 128
-- by default) is a listpack, and its insert walks from the head to the
-- first entry that sorts after the new one: ascending, every insert walks
-- the whole list (about 21,000 instructions a member under callgrind when a
-- batch of 100 refilled an emptied queue), descending it stops at the
-- first. A skiplist does not care. Batch writes to a ZSET that may be
-- small use it, or build their arguments in descending order themselves.
local function zadd_desc(key, pairs)
  local r, n = {}, #pairs
  for i = 1, n, 2 do r[n - i], r[n - i + 1] = pairs[i], pairs[i + 1] end
  redis.call('ZADD', key, unpack(r))
end

-- Ordered members: "<12 hex digit sequence>:<id>". Members of equal score
-- sort by bytes, so the sequence prefix keeps jobs of equal RunAt in enqueue
-- order in any ZSET that holds them.
-- The 12 digits are built as 9 high ones, formatted again only when they
-- change (every 4096 jobs), and 3 low ones from a table kept for the
-- library's life: string.format cost about 2,400 instructions a job under
-- callgrind, this about 700.
local HEX3, seq_hi, seq_hi_s = {}, -1, ''
local function seq_member(n, id)
  local lo = n % 4096
  local hi = (n - lo) / 4096
  if hi ~= seq_hi then seq_hi, seq_hi_s = hi, string.format('%09x', hi) end
  local l = HEX3[lo]
  if not l then
    l = string.format('%03x', lo)
    HEX3[lo] = l
  end
  return seq_hi_s .. l .. ':' .. id
end
local function seq_member_id(member) return member:sub(14) end

-- pop_leases is claim step 1 on a ZSET of waiting jobs scored by RunAt whose
-- members are "<12 hex digit sequence>:<id>" (the sequence keeps FIFO among
-- equal scores). It takes up to max members scored at or below upto (a
-- ZRANGE bound: '<ms>', or '(<ms>' for strictly below), oldest first, and
-- grants each a lease in the same step, so a job is never out of both
-- indexes and concurrent claimers never race for the head job. One ZREM and
-- one ZADD serve the whole batch. Every lease of the call has token_base
-- as its token: a lease is a job's id and a token, and the base is unique
-- to one claim call, so a lease is still never granted twice; where each
-- had "<base>.<n>", a token, a lease member and a Lease field a job cost
-- about 5,000 instructions under callgrind (capacity.yaml's batched claim,
-- 47.5k -> 42.3k a job). Returns the ids for activate_all.
-- With peek it reads one member more, which it leaves, and returns also
-- whether there was one: a due job remains after the batch, which a head
-- read after the pop would have said (zset's claim), at the price of a
-- ZRANGE WITHSCORES (Redis formats the score with printf) a claim.
local function pop_leases(queue, active, upto, max, deadline, token_base, peek)
  local out = {}
  if max < 1 then return out, false end
  local members = redis.call('ZRANGE', queue, '-inf', upto, 'BYSCORE', 'LIMIT', '0', num_text(peek and max + 1 or max))
  local more = #members > max
  if more then members[max + 1] = nil end
  if #members == 0 then return out, false end
  local leases, n = {}, #members
  for i, m in ipairs(members) do
    local id = seq_member_id(m)
    -- leases go in descending order: zadd_desc says why
    leases[2 * (n - i) + 1], leases[2 * (n - i) + 2] = deadline, lease_member(id, token_base)
    out[i] = id
  end
  redis.call('ZREM', queue, unpack(members))
  redis.call('ZADD', active, unpack(leases))
  return out, more
end

-- Wake-ups for ZSET queues (wait mode "block" of zset and bucket; BullMQ's
-- marker). A waiting claimer blocks on BZPOPMIN of a one-member marker ZSET,
-- for no longer than until the queue's head falls due. Whoever makes a job due
-- sooner than every blocked claimer expects sets the marker: a job placed
-- due now or ahead of the old head. The marker holds no job, so a claimer
-- that dies while blocked loses nothing, and a wake with no one blocked
-- waits for the next claimer. A pop that leaves due jobs behind sets it
-- again, so one wake chains to as many claimers as there is work.
-- A backend that polls passes no marker (false): nothing is woken.
local function wake(marker) if marker then redis.call('ZADD', marker, '0', 'w') end end

-- zsets_head returns the lowest score (as Redis wrote it) among the given
-- ZSETs, or nil when they are all empty: the head of a queue kept in one
-- ZSET (zset), or spread over several (bucket's ready ZSET and bucket index).
local function zsets_head(...)
  local head
  for _, key in ipairs({ ... }) do
    local s = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')[2]
    if s and (not head or not ms_le(head, s)) then head = s end
  end
  return head
end

-- ahead reports whether a job placed at score must wake a claimer: it is
-- due now, or earlier than head, the queue's head before the placement (nil:
-- empty), which is the latest a blocked claimer wakes up by itself.
local function ahead(score, head, now)
  return not head or not ms_le(head, score) or ms_le(score, now)
end

-- batch_wakes reports whether placing a batch whose earliest score is low
-- must wake a claimer: some job is due now, or low is ahead of the queue's
-- head (the ZSETs named), which is then read once for the whole batch.
local function batch_wakes(marker, low, now, ...)
  if not marker or not low then return false end
  if ms_le(low, now) then return true end
  return ahead(low, zsets_head(...), now)
end

-- zadd_wake adds member to queue at score and wakes a claimer when the job
-- is due now or becomes the new head. Without a marker it reads nothing.
local function zadd_wake(queue, marker, score, member, now)
  local head = marker and zsets_head(queue)
  redis.call('ZADD', queue, score, member)
  if marker and ahead(score, head, now) then wake(marker) end
end

-- pass_wake takes head, the earliest time a claimer can take work next (a
-- score; nil: none), passes the wake on when that is now, and returns it for
-- the claimer's next block ('' for none).
local function pass_wake(marker, head, now)
  if not head then return '' end
  if ms_le(head, now) then wake(marker) end
  return head
end

-- head_after_pop returns the queue's head score ('' when empty) for the
-- claimer's next block, and passes the wake on when due jobs remain.
local function head_after_pop(queue, marker, now)
  return pass_wake(marker, zsets_head(queue), now)
end

-- Hand-off (issue 24's waits). At a low rate a job due now used to reach a
-- blocked claimer in two trips after its enqueue: the wake (BZPOPMIN of the
-- marker returns), then the claim script. The floor's BLMOVE returns the
-- job itself. Here a claimer that found nothing and blocks is first
-- registered as a waiter (ZSET ae:{queue}:waiters, member
-- "<token base>|<max>|<lease ms>|<worker>", scored by when its wait ends),
-- and blocks on BZPOPMIN of its own inbox (ZSET ae:{queue}:inbox:<token
-- base>) and the marker. An enqueue that finds a waiter and nothing due
-- ahead of its jobs leases them to the waiter in the same call, as the
-- waiter's claim would have (active index, Status and Lease), and puts them
-- in its inbox as one member (handoff_give): the blocked BZPOPMIN returns
-- the jobs. The waiter leaves the set when it is given jobs (the enqueue
-- removes it) or in its next claim call (handoff_leave), which also takes
-- what an enqueue handed it just before.
-- Delivery is idempotent: the inbox holds the item and, scored 1, which
-- BZPOPMIN leaves, a short copy (the times and the job ids: handoff_copy).
-- A claimer whose client gave up on its block at its deadline, while
-- Redis still held the BZPOPMIN blocked (Redis times a block out on its hz
-- tick, up to 100ms late at hz 10), may see that orphaned block pop the
-- item into a reply nobody reads; its leave then finds the copy and makes
-- the item again from the records (handoff_item). So a job handed to a
-- live claimer is always returned by one of its calls. (The copy was the
-- whole item until 2026-11-29: about 5,500 instructions a job more under
-- callgrind, a concatenation and a listpack entry of its bytes.)
-- A claimer that dies registered cannot leave. Its registration is short
-- (base's registration: about a second, renewed by each claim call of a
-- live claimer), so a dead process stops receiving soon. What it was
-- handed meanwhile is under a provisional lease (the registration's lease,
-- a few seconds: base's handoffLease), which a live claimer renews by its
-- first Extend, Complete or Fail; once it ends, Recover returns a job whose
-- item no block popped due again without spending an attempt
-- (return_handed), and takes back a received one as any expired lease.
-- Expired registrations go at the next leave or Recover (handoff_sweep).

-- handoff_entry is one job of an item: id, token, payload and view_extra,
-- each "<length>:<bytes>" ('-' for no extra), in one concatenation (four
-- of a field each and a table.concat cost about 4,000 instructions a job
-- more under callgrind). Lengths go through num_text: Lua formats a number
-- with printf, about 1,500 instructions a field.
local function handoff_entry(id, token, payload, extra)
  if not extra then
    return num_text(#id) .. ':' .. id .. num_text(#token) .. ':' .. token .. num_text(#payload) .. ':' .. payload .. '-'
  end
  return num_text(#id) .. ':' .. id .. num_text(#token) .. ':' .. token .. num_text(#payload) .. ':' .. payload ..
    num_text(#extra) .. ':' .. extra
end

-- handoff_item makes again the item of copy, "~<started>|<deadline>|<id>
-- |<id>..." (handoff_give), for the claimer of token base: the jobs'
-- tokens are "<base>.<i>" in order, their payload and view_extra are read
-- from their records, which handoff_new wrote.
local function handoff_item(tagged, base, copy)
  local started, deadline, ids = copy:match('^~([^|]*)|([^|]*)|(.*)$')
  local parts, prefix, g = { started, '|', deadline, '|' }, job_prefix(tagged), 0
  for id in ids:gmatch('[^|]+') do
    g = g + 1
    local f = rec_get(prefix .. id, 'Payload', 'RetryCount', 'Name')
    parts[#parts + 1] = handoff_entry(id, base .. '.' .. num_text(g), f[1] or '', view_extra(f[2] or nil, f[3] or nil))
  end
  return table.concat(parts)
end

-- handoff_join registers member as a waiter until until_ms ('' member: the
-- claimer does not block, nothing is written).
local function handoff_join(tagged, member, until_ms)
  if member ~= '' then redis.call('ZADD', waiters_key(tagged), until_ms, member) end
end

-- handoff_leave ends registration member ('': none) and returns the item an
-- enqueue handed it meanwhile, or false: a member still in the set was
-- given nothing. The item is the one BZPOPMIN would pop or, when an
-- orphaned block popped that, the one its copy makes (handoff_give,
-- handoff_item). It takes the item and keeps the copy (the inbox expires
-- on its own), so a leave is idempotent: a claim call whose reply was
-- lost (its client's deadline) took the item, and the leave base's
-- BlockClaim sends after it gets the jobs again from the copy. Recover
-- still tells the item taken (no member scored 0: return_handed).
local function handoff_leave(tagged, member)
  if member == '' or redis.call('ZREM', waiters_key(tagged), member) == 1 then return false end
  local base = member:match('^[^|]*')
  local inbox = inbox_key(tagged, base)
  local item = redis.call('ZRANGE', inbox, '0', '0')[1]
  if not item or item == RETURNED then return false end
  if item:sub(1, 1) == '~' then return handoff_item(tagged, base, item) end
  redis.call('ZREMRANGEBYSCORE', inbox, '0', '0')
  return item
end

-- handoff_sweep removes the registrations whose wait ended at or before
-- now (claimers that died registered): nothing is handed to them
-- (handoff_waiters), but they would stay, and keep stream_wake marking.
local function handoff_sweep(waiters, now)
  redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now)
end

-- handoff_waiters returns the members of up to n waiters whose wait
-- ends at now or later, without removing them (handoff_give does, for
-- those it uses); handoff_waiter parses one. A wait that ends at now
-- itself is still given jobs (a bound '(' .. now was a concatenation, about
-- 1,000 instructions a call): its claimer takes them in its block or its
-- next call, or, dead, leaves them to their provisional lease.
local function handoff_waiters(tagged, now, n)
  return redis.call('ZRANGE', waiters_key(tagged), now, '+inf', 'BYSCORE', 'LIMIT', '0', num_text(n))
end

-- handoff_waiter parses a registration member (base's waiter): token
-- base, max, provisional lease ms, worker.
local function handoff_waiter(m)
  local token_base, max, lease, worker = m:match('^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  return token_base, small_num(max), lease, worker
end

-- inbox_ttl is how long an inbox lives for a provisional lease of lease ms
-- (handoff_give): four leases, memoized (a few distinct leases).
local inbox_ttl = memoized(function(lease) return tostring(4 * tonumber(lease)) end)

-- handoff_give leases jobs to the waiter member m (token base, worker),
-- from now until deadline, as a claim's activate does (their records are
-- already written under those leases: handoff_new), and puts them in its
-- inbox as one item, which base's decodeHandoff reads:
-- "<started>|<deadline>|" then each job's handoff_entry; and its copy
-- "~<started>|<deadline>|<id>|<id>..." scored 1, for a leave after an
-- orphaned block (handoff_leave, handoff_item). leases holds the active
-- index's score, member pairs, entries the jobs' handoff_entry, ids their
-- ids joined by '|' (ids hold none: jobstore's check). The inbox lives four provisional leases (Redis's clock),
-- so that a Recover after the lease, even a late one, can tell an item
-- never popped (return_handed).
local function handoff_give(tagged, m, base, lease, now, deadline, leases, entries, ids)
  redis.call('ZADD', active_key(tagged), unpack(leases))
  redis.call('ZREM', waiters_key(tagged), m)
  local inbox, jobs = inbox_key(tagged, base), entries[2] and table.concat(entries) or entries[1]
  redis.call('ZADD', inbox, '0', now .. '|' .. deadline .. '|' .. jobs, '1', '~' .. now .. '|' .. deadline .. '|' .. ids)
  redis.call('PEXPIRE', inbox, inbox_ttl(lease))
end

-- zsets_due says whether a job is due now in the ZSETs named (their
-- lowest score is at most now): handoff_new's busy for zset and bucket.
local function zsets_due(now, ...)
  local head = zsets_head(...)
  return head ~= nil and ms_le(head, now)
end

-- handoff_new hands the due jobs of a read_new_jobs batch to waiters when
-- there are waiters and busy(busy_a, busy_b, now) is false (busy: a job
-- already due waits in the queue, and goes first). Only a batch whose due
-- jobs are in RunAt order is handed (a claim takes the oldest first). Each
-- waiter takes up to its max, in batch order. A handed job's record is
-- written here, once, with ref(jobs, i, tagged) as its Ref (the place a
-- claim would have taken it from; '' for none) and already under its
-- lease (Status InProgress and Lease, as claim_record writes them; written
-- Queued then leased, it was two HSETs: ci-cost.yaml, one run each, 0.8
-- commands and 2,600-3,500 instructions a job more); the active index is
-- derived from tagged, as base.Keys.Active names it. busy and ref are
-- functions of the library, not closures of the caller: a closure made
-- each call cost about 700 instructions under callgrind. It returns
-- handed, with handed[i] true for each job it leased (the caller neither
-- writes nor queues those), and the earliest RunAt of the jobs it did not
-- hand (jobs.low when it handed none; nil when it handed all), for the
-- caller's wake.
local function handoff_new(tagged, jobs, now, busy, busy_a, busy_b, ref)
  -- The waiters first: at speed there are none, and the batch is not read.
  local ws = handoff_waiters(tagged, now, jobs.n)
  if #ws == 0 then return {}, jobs.low end
  local due, last = {}, nil
  for i = 1, jobs.n do
    local at = jobs.at[i]
    if ms_le(at, now) then
      if last and not ms_le(last, at) then return {}, jobs.low end
      due[#due + 1], last = i, at
    end
  end
  if #due == 0 or busy(busy_a, busy_b, now) then return {}, jobs.low end
  local handed, k = {}, 1
  for _, m in ipairs(ws) do
    if k > #due then break end
    local base, max, lease, worker = handoff_waiter(m)
    local deadline = ms_plus(now, lease)
    local leases, entries, ids = {}, {}, nil
    while k <= #due and #entries < max do
      local i, g = due[k], #entries + 1
      local payload, extra = new_job_view(jobs, i)
      local token = base .. '.' .. num_text(g)
      create_job(jobs, i, ref(jobs, i, tagged), lease_field(token, deadline, now, worker))
      leases[2 * g - 1], leases[2 * g] = deadline, lease_member(jobs.id[i], token)
      entries[g], ids = handoff_entry(jobs.id[i], token, payload, extra), ids and ids .. '|' .. jobs.id[i] or jobs.id[i]
      handed[i], k = true, k + 1
    end
    handoff_give(tagged, m, base, lease, now, deadline, leases, entries, ids)
  end
  local low
  for i = 1, jobs.n do
    if not handed[i] and (not low or not ms_le(low, jobs.at[i])) then low = jobs.at[i] end
  end
  return handed, low
end

-- handoff_new's busy for the ZSET queues: a job is due in the ZSETs a
-- and b (b may be nil).
local function zsets_busy(a, b, now) return zsets_due(now, a, b) end

-- no_ref is handoff_new's ref for every backend: a job handed at its
-- enqueue has no Ref until it first goes (back) to a queue. A ZSET
-- queue's member was taken from the batch's sequence (an INCRBY and a
-- seq_member, about 9,500 instructions under callgrind for a batch of
-- one), which a handed job never used unless it failed or its lease was
-- taken back; seq_ref_of makes it then.
local function no_ref() return '' end

-- seq_ref_of returns the seq_member a record's Ref holds (after its last
-- '|' where the Ref names its place, as bucket's do), or, for a job
-- handed at its enqueue (no Ref), a new one from the queue's sequence
-- (seq_key, derived from tagged), and whether it was new. Its caller
-- writes the Ref it places the job under.
local function seq_ref_of(key, id, tagged)
  local ref = rec_get(key, 'Ref')[1]
  if ref and ref ~= '' then
    -- a plain find: ('([^|]+)$') tried every start, about 70,000
    -- instructions for a bucket Ref under callgrind
    local bar = ref:find('|', 1, true)
    return bar and ref:sub(bar + 1) or ref, false
  end
  return seq_member(redis.call('INCR', seq_key(tagged)), id), true
end
