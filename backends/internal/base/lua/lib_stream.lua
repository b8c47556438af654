-- Stream functions of the shared library (backends stream and dual): the
-- composed library is the record prelude, lib.lua, then this file (base's
-- scripts.go), so everything here may use lib.lua's functions.

-- Streams (backends stream and dual). A job waiting in a stream is an entry
-- {id = <job id>, at, p, x} (stream_xadd) read by the one consumer group
-- below, and its Ref is the entry id; a job dual parks in its delayed ZSET
-- has the member "<12 hex digit sequence>:<id>" as Ref. Base's stream.go
-- names the group too.
--
-- An entry is read once and never deleted one by one: the claim that reads
-- it in its own script reads with NOACK (the read and the lease are one
-- atomic call, so no pending entry is needed to find a job a crashed
-- claimer read), a claim that read it with a blocking XREADGROUP
-- acknowledges it when it activates, and whole listpack nodes of entries
-- read and not pending are trimmed (stream_trim). XDEL of one entry costs
-- about 35,000 instructions (it walks the node to the entry and rewrites
-- it), more than the rest of a job's stream work together. So the stream
-- holds read entries until their node goes: the group's lag, not XLEN,
-- counts the unread ones (base's Counts). A job canceled while its entry is
-- unread has that entry in the voided SET (stream_void), which the claim
-- skips: deleting it would leave a tombstone ahead of the group, and Redis
-- then no longer knows the lag. Seed variants keep their seeds' XACK and
-- XDEL (stream_drop).
local STREAM_GROUP = 'workers'

local function stream_drop(stream, ref)
  redis.call('XACK', stream, STREAM_GROUP, ref)
  redis.call('XDEL', stream, ref)
end

-- stream_voided is the SET of unread entries whose jobs were canceled,
-- derived from a key of the queue as job_prefix derives records
-- (base.Keys.Voided names it in Go).
local stream_voided = memoized(function(tagged) return queue_prefix(tagged) .. 'voided' end)

-- stream_id_lt orders entry ids "<ms>-<seq>".
local function stream_id_lt(a, b)
  local am, as = a:match('^(%d+)-(%d+)$')
  local bm, bs = b:match('^(%d+)-(%d+)$')
  if am ~= bm then return not ms_le(bm, am) end
  return not ms_le(bs, as)
end

-- stream_pending_min is the oldest pending entry's id, or nil.
local function stream_pending_min(stream)
  local p = redis.call('XPENDING', stream, STREAM_GROUP)
  if p[1] == 0 then return nil end
  return p[2]
end

-- stream_trim drops the stream's whole listpack nodes that hold only
-- entries older than upto (an entry the group has read) and than every
-- pending entry: entries read and done with. XTRIM MINID ~ removes whole
-- nodes only, which is what makes it cheap.
local function stream_trim(stream, upto)
  local pmin = stream_pending_min(stream)
  if pmin and stream_id_lt(pmin, upto) then upto = pmin end
  redis.call('XTRIM', stream, 'MINID', '~', upto)
end

-- stream_last_delivered is the group's last delivered entry id (XINFO
-- GROUPS), '0-0' before any read.
-- stream_group returns the group's last delivered id and its lag (the
-- entries after it, which Redis 7 counts; false when Redis cannot tell,
-- after deletions past the last delivered id, or does not).
local function stream_group(stream)
  local gs = redis.call('XINFO', 'GROUPS', stream)
  for _, g in ipairs(gs) do
    local name, last, lag
    for i = 1, #g, 2 do
      local f = g[i]
      if f == 'name' then name = g[i + 1] elseif f == 'last-delivered-id' then last = g[i + 1] elseif f == 'lag' then lag = g[i + 1] end
    end
    if name == STREAM_GROUP then return last, lag or false end
  end
  return '0-0', false
end

local function stream_last_delivered(stream)
  return (stream_group(stream))
end

-- stream_unread says whether entry still waits for the group: present,
-- and pending (read by a claimer that has not leased it yet) or past last,
-- the group's last delivered id (stream_last_delivered, read once a call
-- by the caller), and not voided.
local function stream_unread(stream, entry, last)
  if #redis.call('XRANGE', stream, entry, entry) == 0 then return false end
  if #redis.call('XPENDING', stream, STREAM_GROUP, entry, entry, '1') > 0 then return true end
  return stream_id_lt(last, entry) and redis.call('SISMEMBER', stream_voided(stream), entry) == 0
end

-- stream_void takes a canceled job's entry out of the claims' way: a
-- pending one is acknowledged (the claimer that read it finds the record
-- canceled when it activates), an unread one joins the voided SET.
local function stream_void(stream, entry)
  if redis.call('XACK', stream, STREAM_GROUP, entry) == 0 and stream_id_lt(stream_last_delivered(stream), entry) then
    redis.call('SADD', stream_voided(stream), entry)
  end
end

-- stream_place puts job id where it waits for run_at and returns its new
-- Ref: with a delayed ZSET (and its sequence key), there when the job is not
-- due or a delayed job with the same RunAt still waits to be promoted (so
-- equal RunAt keeps FIFO); else a new entry at the stream's tail.
-- dhead, when given, is the delayed ZSET's lowest score before a batch
-- (false: empty): a due job below it cannot have a twin there, and the
-- look-up is skipped.
--
-- An entry carries what a claim of it needs: {id, at = RunAt, p = payload
-- (left out when empty), x = view_extra's retries|name (left out when
-- false)}, so that a claim that reads entries in its own script (in which
-- no entry can be stale: every script that moves, finishes or cancels a job
-- deletes its entry in the same call) reads no record (stream_take). The
-- payload is then kept twice while the job waits, in its record and in its
-- entry; an HMGET a job, about 6,500 instructions, is what that buys.
local function stream_xadd(stream, id, run_at, payload, extra)
  if payload and payload ~= '' then
    if extra then return redis.call('XADD', stream, '*', 'id', id, 'at', run_at, 'p', payload, 'x', extra) end
    return redis.call('XADD', stream, '*', 'id', id, 'at', run_at, 'p', payload)
  end
  if extra then return redis.call('XADD', stream, '*', 'id', id, 'at', run_at, 'x', extra) end
  return redis.call('XADD', stream, '*', 'id', id, 'at', run_at)
end

local function stream_place(stream, delayed, seq, id, run_at, now, dhead, payload, extra)
  if delayed and (not ms_le(run_at, now) or
      ((dhead == nil or (dhead and ms_le(dhead, run_at))) and
      #redis.call('ZRANGE', delayed, run_at, run_at, 'BYSCORE', 'LIMIT', '0', '1') > 0)) then
    local member = seq_member(redis.call('INCR', seq), id)
    redis.call('ZADD', delayed, run_at, member)
    return member
  end
  return stream_xadd(stream, id, run_at, payload, extra)
end

-- stream_lease_entry is the entry a seed variant's token names (its claim
-- appends "@<entry id>" to it, so Complete needs no read of the record's
-- Ref); a token without one falls back to the Ref. It reads a lease member
-- ("<id>|<token>") as well: an entry id holds neither '@' nor '|'.
local function stream_lease_entry(key, token)
  return token:match('@([^@|]+)$') or rec_get(key, 'Ref')[1]
end

-- stream_move places a job anew (a retry, a recovered lease, an orphan, a
-- job read too early) and points its Ref there. The entry it held is left
-- alone: read already, it goes with its node (stream_trim); a pending one
-- is the caller's to acknowledge. view, when given, is {payload, extra}
-- as the job's current entry carries them (stream_xadd), so the record is
-- not read: a delayed job a claim reads too early is re-appended this way,
-- once a pass.
local function stream_move(stream, delayed, seq, key, id, run_at, now, view)
  local payload, extra
  if view then
    payload, extra = view[1], view[2]
  else
    local f = rec_get(key, 'RunAt', 'Payload', 'RetryCount', 'Name')
    run_at, payload, extra = run_at or f[1], f[2], view_extra(f[3], f[4])
  end
  local ref = stream_place(stream, delayed, seq, id, run_at, now, nil, payload, extra)
  rec_set(key, 'Ref', ref)
  return ref
end

-- stream_requeue is the seed variants' move: the entry the job holds (its
-- Ref) is acknowledged and deleted first, as the seeds do.
local function stream_requeue(stream, delayed, seq, key, id, run_at, now)
  local f = rec_get(key, 'Ref', 'RunAt', 'Payload', 'RetryCount', 'Name')
  stream_drop(stream, f[1])
  return stream_move(stream, delayed, seq, key, id, run_at or f[2], now, { f[3], view_extra(f[4], f[5]) })
end

-- stream_tail is the stream's last entry id ('' when empty).
local function stream_tail(stream)
  local t = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', '1')[1]
  return t and t[1] or ''
end

-- stream_take claims, out of the entries a read returned (flat entry id,
-- job id pairs), up to take due jobs, each under a lease whose token is
-- token_base (lib.lua's pop_leases says why one token serves a call). A
-- job read before its RunAt is never started: a new entry is appended for
-- it (the cost of having no place for delayed jobs); so is a due job past
-- take. An entry whose record is gone, no longer waiting, or points at
-- another entry (Ref) is skipped, and so is a voided one (stream_void).
-- fields, when given, holds each entry's field list as the claim's own
-- script read it (with NOACK): an entry with the
-- claim's view (stream_xadd) is then taken without reading its record (it
-- cannot be stale: a job leaves its unread entry only by a claim or by
-- Cancel, which voids it). Without fields (entries a blocking read
-- returned before this call, when anything may have happened to them)
-- each record is read, and every entry is acknowledged at the end: the
-- lease, not the pending entry, covers a job from here on. Either way, the
-- nodes of entries read are trimmed (stream_trim). Record keys are derived
-- (job_prefix). Returns the claimed jobs as view_out lays them out, oldest
-- RunAt first (stream order among equal RunAt: a retry appended later may
-- be due earlier), and the earliest RunAt appended for not being due, or
-- ''.
local function stream_take(active, stream, prefix, entries, now, deadline, worker, token_base, take, fields)
  local taken, leases, next_at, n, sorted, lease = {}, {}, '', 0, true, nil
  local voided = stream_voided(stream)
  local any_voided = #entries > 0 and redis.call('SCARD', voided) > 0
  for i = 1, #entries, 2 do
    local entry, id = entries[i], entries[i + 1]
    local key = prefix .. id
    local e = fields and fields[(i + 1) / 2]
    local ok, run_at, payload, extra, carried
    if any_voided and redis.call('SREM', voided, entry) == 1 then
      ok = false
    elseif e and e[3] == 'at' then
      -- read in this script: not stale, and it carries its view
      ok, run_at = true, e[4]
      for k = 5, #e, 2 do
        if e[k] == 'p' then payload = e[k + 1] elseif e[k] == 'x' then extra = e[k + 1] end
      end
      carried = true
    else
      local f = rec_get(key, 'Status', 'Ref', 'RunAt', 'Payload', 'RetryCount', 'Name')
      ok, run_at, payload, extra = f[2] == entry and is_waiting(f[1]), f[3], f[4], view_extra(f[5], f[6])
    end
    local early = run_at and not ms_le(run_at, now)
    if not ok then
      -- stale or voided: nothing to do but pass it
    elseif early or n >= take then
      stream_move(stream, nil, nil, key, id, run_at, now, carried and { payload, extra } or nil)
      if early and (next_at == '' or not ms_le(next_at, run_at)) then next_at = run_at end
    else
      n = n + 1
      lease = lease or lease_field(token_base, deadline, now, worker)
      leases[#leases + 1] = deadline
      leases[#leases + 1] = lease_member(id, token_base)
      rec_set(key, 'Status', ST_INPROGRESS, 'Lease', lease)
      taken[n] = { id, token_base, payload or false, run_at or '0', n, extra or false }
      if n > 1 and not ms_le(taken[n - 1][4], taken[n][4]) then sorted = false end
    end
  end
  if #leases > 0 then zadd_desc(active, leases) end
  if #entries > 0 then
    if not fields then
      local ids = {}
      for i = 1, #entries, 2 do ids[#ids + 1] = entries[i] end
      redis.call('XACK', stream, STREAM_GROUP, unpack(ids))
    end
    stream_trim(stream, entries[#entries - 1])
  end
  if not sorted then
    table.sort(taken, function(x, y)
      if x[4] == y[4] then return x[5] < y[5] end
      return ms_le(x[4], y[4])
    end)
  end
  local out = {}
  for _, t in ipairs(taken) do view_out_x(out, t[1], t[2], t[3], t[6]) end
  return out, next_at
end

-- stream_promote is dual's mover: it moves up to max due jobs from the
-- delayed ZSET into the stream, oldest first, each exactly once (ZREM and
-- XADD in one atomic call), and returns how many it moved. members, when
-- given, are what a plain read found due (each is checked again); else the
-- ZSET itself is read. Record keys are derived (job_prefix).
local function stream_promote(delayed, stream, prefix, now, max, members)
  members = members or redis.call('ZRANGE', delayed, '-inf', now, 'BYSCORE', 'LIMIT', '0', num_text(max))
  local moved = 0
  for _, member in ipairs(members) do
    local score = redis.call('ZSCORE', delayed, member)
    local key = prefix .. seq_member_id(member)
    if score and ms_le(score, now) and redis.call('ZREM', delayed, member) == 1 then
      local f = rec_get(key, 'Ref', 'RunAt', 'Payload', 'RetryCount', 'Name')
      if f[1] == member then
        rec_set(key, 'Ref', stream_xadd(stream, seq_member_id(member), f[2], f[3], view_extra(f[4], f[5])))
        moved = moved + 1
      end
    end
  end
  return moved
end

-- The streams' hand-off (lib.lua's): a claimer that finds nothing registers
-- as a waiter in its claim script and blocks on BZPOPMIN of its inbox and
-- the marker ae:{queue}:wake, not on XREADGROUP BLOCK. So an entry appended
-- while claimers wait must set the marker: each script that may append a
-- due entry ends with stream_wake, which sets it when a live waiter is
-- registered at now (one ZCOUNT a call otherwise; the seed variants'
-- claimers never register): a registration left by a claimer that died
-- registered, expired and not yet swept (handoff_sweep), sets nothing. A
-- caller without now (the orphan sweep) wakes while any registration is
-- there.
local function stream_wake(stream, now)
  local waiters = waiters_key(stream)
  local live
  if now then
    live = redis.call('ZCOUNT', waiters, '(' .. now, '+inf') > 0
  else
    live = redis.call('EXISTS', waiters) == 1
  end
  if live then redis.call('ZADD', wake_key(stream), '0', 'w') end
end

-- stream_busy is handoff_new's busy for the streams: a job handed now
-- would overtake one unread in the stream (its last entry is past the
-- group's last delivered one; a voided or not yet due entry counts, which
-- only forgoes a hand-off) or due in dual's delayed ZSET (nil: none). The
-- group's lag says so in the XINFO GROUPS it reads anyway; only when Redis
-- cannot count it does it read the stream's last entry (XREVRANGE, whose
-- whole entry, fields and all, became Lua tables: about 40,000
-- instructions a hand-off under callgrind).
local function stream_busy(stream, delayed, now)
  if delayed and zsets_due(now, delayed) then return true end
  local last, lag = stream_group(stream)
  if lag then return lag > 0 end
  local tail = stream_tail(stream)
  return tail ~= '' and stream_id_lt(last, tail)
end
