-- Shared by every backend's scripts. The store loads, once per server, one
-- function library made of the record prelude of its encoding (rec_hash.lua
-- or rec_json.lua), this file and every script body of the backend (see
-- base's scripts.go); a server without Functions gets the same three parts
-- as one script per body. Times are Unix milliseconds from the store's
-- clock, passed in ARGV; nothing here reads Redis TIME.

local ST_QUEUED, ST_SCHEDULED, ST_INPROGRESS = '100', '200', '300'
local ST_COMPLETED, ST_FAILED, ST_CANCELED = '400', '500', '600'

-- Error replies the Go side maps to jobstore's sentinel errors.
local function err_lease_lost(id) return redis.error_reply('AE_LEASE_LOST ' .. id) end
local function err_not_found(id) return redis.error_reply('AE_NOT_FOUND ' .. id) end
local function err_duplicate(id) return redis.error_reply('AE_DUPLICATE ' .. id) end
local function err_not_cancelable(id, st) return redis.error_reply('AE_NOT_CANCELABLE ' .. id .. ' status ' .. tostring(st)) end

-- read_new_jobs parses the enqueue layout that base.EnqueueArgs writes, from
-- ARGV[at]: n, then per job: id, runAt, npairs, then npairs field/value
-- pairs. Job i's record key is KEYS[first_key + i - 1]. It fails the whole
-- call, before any write, when a job already exists or repeats in the batch.
-- One EXISTS of every record key serves the whole batch (the keys share a
-- hash tag, so one slot): an EXISTS a job was one command a job of the
-- five or six a job costs; the job that exists is looked up only then.
-- A job's pairs stay in ARGV (job.from, job.to), and its RunAt is kept as
-- the text Go sent (run_at_s) beside the number: a Lua number handed to
-- redis.call is formatted with printf, which cost about 5% of a batched
-- job's Redis instructions under callgrind.
local function read_new_jobs(at, first_key)
  local n = tonumber(ARGV[at])
  local jobs, seen, keys = {}, {}, {}
  at = at + 1
  for i = 1, n do
    local id, run_at_s, np = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])
    local key = KEYS[first_key + i - 1]
    if seen[id] then return nil, err_duplicate(id) end
    seen[id] = true
    jobs[i] = { id = id, run_at = tonumber(run_at_s), run_at_s = run_at_s, key = key,
      from = at + 3, to = at + 2 + np * 2 }
    keys[i] = key
    at = at + 3 + np * 2
  end
  if n > 0 and redis.call('EXISTS', unpack(keys)) > 0 then
    for _, job in ipairs(jobs) do
      if rec_exists(job.key) then return nil, err_duplicate(job.id) end
    end
  end
  return jobs
end

-- num_text(i) is tostring(i), kept for the library's life (its locals
-- outlive a call; loading it may not call tostring): a token's "<base>.<i>"
-- would otherwise format i with printf in every claim.
local NUM = {}
local function num_text(i)
  local t = NUM[i]
  if not t then
    t = tostring(i)
    NUM[i] = t
  end
  return t
end

-- Derived record keys. A claim cannot know which jobs it takes before it
-- runs, so it cannot declare their records in KEYS without a round trip of
-- its own (the old pop, then activate). Claim scripts therefore build the
-- record key of a job they took from the queue key they were given: the
-- same "ae:{queue}:" prefix, so the same hash tag and the same Cluster slot,
-- which Redis Cluster accepts for keys a script did not declare (as BullMQ's
-- and asynq's scripts do). base.Keys.Job builds the same names in Go. Every
-- other script still receives its record keys in KEYS.
local function job_prefix(tagged)
  return tagged:match('^(.-{[^}]*}:)') .. 'job:'
end

-- create_job writes a new record: the producer's fields (ARGV[job.from ..
-- job.to]) plus Status Queued and the backend's Ref (its handle on the job
-- in its own index).
local function create_job(job, ref)
  rec_create(job.key, ST_QUEUED, ref, job.from, job.to)
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

-- activate puts a record under a lease it already holds. It returns the
-- record as it was before (rec_snapshot): the claim's own writes are known
-- to the caller, which lays them over it (base.DecodeClaimed), so the record
-- is read once and never again after the write. A record that is gone or no
-- longer waiting (canceled meanwhile) gives up the lease and returns nil.
local function claim_record(key, token, worker, now, deadline)
  rec_set(key, 'Status', ST_INPROGRESS, 'Lease', lease_field(token, deadline, now, worker))
end

local function activate(active, key, id, token, worker, now, deadline)
  local rec, st = rec_snapshot(key)
  if not is_waiting(st) then
    lease_release(active, id, token)
    return nil
  end
  claim_record(key, token, worker, now, deadline)
  return rec
end

-- activate_all activates the id, token pairs a pop leased, deriving each
-- record key with prefix (job_prefix), and returns token, record pairs for
-- base.DecodeClaimed.
local function activate_all(active, prefix, id_tokens, worker, now, deadline)
  local out = {}
  for i = 1, #id_tokens, 2 do
    local id, token = id_tokens[i], id_tokens[i + 1]
    local rec = activate(active, prefix .. id, id, token, worker, now, deadline)
    if rec then
      out[#out + 1] = token
      out[#out + 1] = rec
    end
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

-- finish_job finishes a held lease without counting it: Completed, result
-- kept for retention_ms. It returns false, changing nothing, when the lease
-- is no longer held.
local function finish_job(active, key, id, token, now, result, retention_ms)
  if not lease_release(active, id, token) then return false end
  rec_set(key, 'Status', ST_COMPLETED, 'Result', result, 'CompletedAt', now)
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
-- record it finishes: it adds the batch's ids to the queue's expiry index
-- (a ZSET id -> the store-clock time the record may go, "<prefix>expire",
-- named from a key of the queue as job_prefix names records) with one
-- ZADD, and deletes up to twice as many records already past it (one
-- ZRANGE, and a DEL and a ZREM only when some are), so the index never
-- grows while completions go on; Recover sweeps it too (shared/expire.lua),
-- which reaches a queue that has gone quiet. A record thus lives from its
-- retention until the next sweep, never less. Complete, Fail, Cancel and
-- Recover's dead letters still set a PEXPIRE: they are one job a call,
-- where a TTL is one command and the index two.
local function expire_index(tagged)
  return tagged:match('^(.-{[^}]*}:)') .. 'expire'
end

-- sweep_expired deletes up to max records whose expiry-index time is at
-- or before now, and their index members; it returns how many went.
local function sweep_expired(index, prefix, now, max)
  local ids = redis.call('ZRANGE', index, '-inf', now, 'BYSCORE', 'LIMIT', 0, max)
  if #ids == 0 then return 0 end
  local keys = {}
  for i, id in ipairs(ids) do keys[i] = prefix .. id end
  redis.call('DEL', unpack(keys))
  redis.call('ZREM', index, unpack(ids))
  return #ids
end

-- retire lists finished ids in the expiry index at now + retention_ms and
-- sweeps what is due.
local function retire(tagged, ids, now, retention_ms)
  local index, at = expire_index(tagged), tostring(tonumber(now) + tonumber(retention_ms))
  local add = {}
  for _, id in ipairs(ids) do
    add[#add + 1] = at
    add[#add + 1] = id
  end
  redis.call('ZADD', index, unpack(add))
  sweep_expired(index, job_prefix(tagged), now, 2 * #ids)
end

-- complete_many is CompleteMany: ARGV[at..] are id, token, result triples
-- and job i's record is KEYS[first_key + i - 1]. Each held lease is
-- finished (done(key, id, token) runs after each, for a backend's own
-- index), the leases are released with one ZREM, the completions counted
-- with one INCRBY and the records retired with one ZADD (retire), and the
-- reply has one integer per lease: 1 completed, 0 lease lost.
local function complete_many(active, completed, first_key, at, now, retention_ms, done)
  -- One ZMSCORE tells which leases are held and one ZREM releases them
  -- all: two lease-index commands a batch, not one a job. A lease given
  -- twice in one batch completes once; the second gets 0.
  local members = {}
  for i = at, #ARGV, 3 do members[#members + 1] = lease_member(ARGV[i], ARGV[i + 1]) end
  if #members == 0 then return {} end
  local scores = redis.call('ZMSCORE', active, unpack(members))
  local out, held, ids, seen = {}, {}, {}, {}
  for j, m in ipairs(members) do
    local i = at + (j - 1) * 3
    if scores[j] and not seen[m] then
      seen[m] = true
      local key = KEYS[first_key + j - 1]
      rec_set(key, 'Status', ST_COMPLETED, 'Result', ARGV[i + 2], 'CompletedAt', now)
      held[#held + 1] = m
      ids[#ids + 1] = ARGV[i]
      out[#out + 1] = 1
      if done then done(key, ARGV[i], ARGV[i + 1]) end
    else
      out[#out + 1] = 0
    end
  end
  if #held > 0 then
    redis.call('ZREM', active, unpack(held))
    redis.call('INCRBY', completed, #held)
    retire(active, ids, now, retention_ms)
  end
  return out
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

-- recover_leases is Recover for every backend. ARGV[at..] are lease members
-- the caller read from the active index as expired; job i's record is
-- KEYS[first_key + i - 1]. A member still in the index with a deadline at or
-- before now is taken (ZREM decides the one winner among recoverers), and
-- its job retried at once or dead-lettered. Returns {requeued, dead} ids.
local function recover_leases(active, dead, first_key, at, now, retention_ms, place)
  local requeued, dead_ids = {}, {}
  for i = at, #ARGV do
    local member = ARGV[i]
    local key = KEYS[first_key + i - at]
    local score = redis.call('ZSCORE', active, member)
    if score and tonumber(score) <= tonumber(now) and redis.call('ZREM', active, member) == 1 then
      local id = lease_split(member)
      if rec_exists(key) then
        if retry_or_dead(dead, key, id, now, 'lease expired', now, retention_ms) then
          place(key, id, now)
          requeued[#requeued + 1] = id
        else
          dead_ids[#dead_ids + 1] = id
        end
      end
    end
  end
  return { requeued, dead_ids }
end

-- Ordered members: "<12 hex digit sequence>:<id>". Members of equal score
-- sort by bytes, so the sequence prefix keeps jobs of equal RunAt in enqueue
-- order in any ZSET that holds them.
local function seq_member(n, id) return string.format('%012x', n) .. ':' .. id end
local function seq_member_id(member) return member:sub(14) end

-- pop_leases is claim step 1 on a ZSET of waiting jobs scored by RunAt whose
-- members are "<12 hex digit sequence>:<id>" (the sequence keeps FIFO among
-- equal scores). It takes up to max members scored at or below upto (a
-- ZRANGE bound: '<ms>', or '(<ms>' for strictly below), oldest first, and
-- grants each a lease in the same step, so a job is never out of both
-- indexes and concurrent claimers never race for the head job. One ZREM and
-- one ZADD serve the whole batch. Returns id, token pairs for activate_all.
local function pop_leases(queue, active, upto, max, deadline, token_base)
  local out = {}
  if max < 1 then return out end
  local members = redis.call('ZRANGE', queue, '-inf', upto, 'BYSCORE', 'LIMIT', 0, max)
  if #members == 0 then return out end
  local leases = {}
  for i, m in ipairs(members) do
    local id, token = seq_member_id(m), token_base .. '.' .. num_text(i)
    leases[#leases + 1] = deadline
    leases[#leases + 1] = lease_member(id, token)
    out[#out + 1] = id
    out[#out + 1] = token
  end
  redis.call('ZREM', queue, unpack(members))
  redis.call('ZADD', active, unpack(leases))
  return out
end

-- Streams (backends stream and dual). A job waiting in a stream is an entry
-- {id = <job id>} read by the one consumer group below, and its Ref is the
-- entry id; a job dual parks in its delayed ZSET has the member
-- "<12 hex digit sequence>:<id>" as Ref. An entry leaves the pending entries
-- list and the stream together (stream_drop), so XLEN minus the pending
-- count is the number of unread entries. Base's stream.go names the group too.
local STREAM_GROUP = 'workers'

local function stream_drop(stream, ref)
  redis.call('XACK', stream, STREAM_GROUP, ref)
  redis.call('XDEL', stream, ref)
end

-- stream_place puts job id where it waits for run_at and returns its new
-- Ref: with a delayed ZSET (and its sequence key), there when the job is not
-- due or a delayed job with the same RunAt still waits to be promoted (so
-- equal RunAt keeps FIFO); else a new entry at the stream's tail.
-- dhead, when given, is the delayed ZSET's lowest score before a batch
-- (false: empty): a due job below it cannot have a twin there, and the
-- look-up is skipped.
local function stream_place(stream, delayed, seq, id, run_at, now, dhead)
  if delayed and (tonumber(run_at) > tonumber(now) or
      ((dhead == nil or (dhead and tonumber(dhead) <= tonumber(run_at))) and
      #redis.call('ZRANGE', delayed, run_at, run_at, 'BYSCORE', 'LIMIT', 0, 1) > 0)) then
    local member = seq_member(redis.call('INCR', seq), id)
    redis.call('ZADD', delayed, run_at, member)
    return member
  end
  return redis.call('XADD', stream, '*', 'id', id)
end

-- stream_lease_entry is the entry a stream claim's token names (the claim
-- appends "@<entry id>" to it, so Complete needs no read of the record's
-- Ref); a token without one falls back to the Ref.
local function stream_lease_entry(key, token)
  return token:match('@(.+)$') or rec_get(key, 'Ref')[1]
end

-- stream_requeue drops the stream entry a job holds (its Ref) and places the
-- job again: a retry, a recovered lease, an orphan, a job read too early.
local function stream_requeue(stream, delayed, seq, key, id, run_at, now)
  stream_drop(stream, rec_get(key, 'Ref')[1])
  local ref = stream_place(stream, delayed, seq, id, run_at, now)
  rec_set(key, 'Ref', ref)
  return ref
end

-- stream_tail is the stream's last entry id ('' when empty).
local function stream_tail(stream)
  local t = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  return t and t[1] or ''
end

-- stream_take claims, out of the entries a read returned (flat entry id,
-- job id pairs), up to take due jobs, each under a lease whose token is
-- token_base .. '.' .. n .. '@' .. entry id; each one's entry stays
-- pending, so the pending entries list and the active index hold it
-- together until Complete, Fail or Recover. A job read before its RunAt is
-- never started: its entry is dropped and a new one appended (the cost of
-- having no place for delayed jobs); so is a due job past take. An entry
-- whose record is gone, no longer waiting, or points at another entry (Ref)
-- is dropped. Record keys are derived (job_prefix). Returns token, record
-- pairs (records as rec_snapshot read them) and the earliest RunAt
-- appended for not being due, or ''.
local function stream_take(active, stream, prefix, entries, now, deadline, worker, token_base, take)
  local out, leases, next_at, n = {}, {}, '', 0
  for i = 1, #entries, 2 do
    local entry, id = entries[i], entries[i + 1]
    local key = prefix .. id
    local rec, st = rec_snapshot(key)
    local ref, run_at = rec and rec_snap_field(key, rec, 'Ref'), rec and rec_snap_field(key, rec, 'RunAt')
    local early = run_at and tonumber(run_at) > tonumber(now)
    if ref ~= entry or not is_waiting(st) then
      stream_drop(stream, entry)
    elseif early or n >= take then
      stream_requeue(stream, nil, nil, key, id, run_at, now)
      if early and (next_at == '' or tonumber(run_at) < tonumber(next_at)) then next_at = run_at end
    else
      n = n + 1
      local token = token_base .. '.' .. num_text(n) .. '@' .. entry
      leases[#leases + 1] = deadline
      leases[#leases + 1] = lease_member(id, token)
      claim_record(key, token, worker, now, deadline)
      out[#out + 1] = token
      out[#out + 1] = rec
    end
  end
  if #leases > 0 then redis.call('ZADD', active, unpack(leases)) end
  return out, next_at
end

-- stream_promote is dual's mover: it moves up to max due jobs from the
-- delayed ZSET into the stream, oldest first, each exactly once (ZREM and
-- XADD in one atomic call), and returns how many it moved. members, when
-- given, are what a plain read found due (each is checked again); else the
-- ZSET itself is read. Record keys are derived (job_prefix).
local function stream_promote(delayed, stream, prefix, now, max, members)
  members = members or redis.call('ZRANGE', delayed, '-inf', now, 'BYSCORE', 'LIMIT', 0, max)
  local moved = 0
  for _, member in ipairs(members) do
    local score = redis.call('ZSCORE', delayed, member)
    local key = prefix .. seq_member_id(member)
    if score and tonumber(score) <= tonumber(now) and redis.call('ZREM', delayed, member) == 1
        and rec_get(key, 'Ref')[1] == member then
      rec_set(key, 'Ref', redis.call('XADD', stream, '*', 'id', seq_member_id(member)))
      moved = moved + 1
    end
  end
  return moved
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
local function wake(marker) if marker then redis.call('ZADD', marker, 0, 'w') end end

-- zsets_head returns the lowest score (as Redis wrote it) among the given
-- ZSETs, or nil when they are all empty: the head of a queue kept in one
-- ZSET (zset), or spread over several (bucket's ready ZSET and bucket index).
local function zsets_head(...)
  local head
  for _, key in ipairs({ ... }) do
    local s = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]
    if s and (not head or tonumber(s) < tonumber(head)) then head = s end
  end
  return head
end

-- ahead reports whether a job placed at score must wake a claimer: it is
-- due now, or earlier than head, the queue's head before the placement (nil:
-- empty), which is the latest a blocked claimer wakes up by itself.
local function ahead(score, head, now)
  score = tonumber(score)
  return not head or score < tonumber(head) or score <= tonumber(now)
end

-- batch_wakes reports whether placing a batch whose earliest score is low
-- must wake a claimer: some job is due now, or low is ahead of the queue's
-- head (the ZSETs named), which is then read once for the whole batch.
local function batch_wakes(marker, low, now, ...)
  if not marker or not low then return false end
  if tonumber(low) <= tonumber(now) then return true end
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
  if tonumber(head) <= tonumber(now) then wake(marker) end
  return head
end

-- head_after_pop returns the queue's head score ('' when empty) for the
-- claimer's next block, and passes the wake on when due jobs remain.
local function head_after_pop(queue, marker, now)
  return pass_wake(marker, zsets_head(queue), now)
end
