-- Stream functions of the shared library (backends stream and dual): the
-- composed library is the record prelude, lib.lua, then this file (base's
-- scripts.go), so everything here may use lib.lua's functions.

-- Streams (backends stream and dual). A job waiting in a stream is an entry
-- {id = <job id>, at, p, x} (stream_xadd) read by the one consumer group
-- below, and its Ref is the entry id; a job dual parks in its delayed ZSET
-- has the member "<12 hex digit sequence>:<id>" as Ref. An entry leaves the
-- pending entries list and the stream together (stream_drop), so XLEN minus
-- the pending count is the number of unread entries. Base's stream.go names
-- the group too.
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
      #redis.call('ZRANGE', delayed, run_at, run_at, 'BYSCORE', 'LIMIT', 0, 1) > 0)) then
    local member = seq_member(redis.call('INCR', seq), id)
    redis.call('ZADD', delayed, run_at, member)
    return member
  end
  return stream_xadd(stream, id, run_at, payload, extra)
end

-- stream_lease_entry is the entry a stream claim's token names (the claim
-- appends "@<entry id>" to it, so Complete needs no read of the record's
-- Ref); a token without one falls back to the Ref. It reads a lease member
-- ("<id>|<token>") as well: an entry id holds neither '@' nor '|'.
local function stream_lease_entry(key, token)
  return token:match('@([^@|]+)$') or rec_get(key, 'Ref')[1]
end

-- stream_requeue drops the stream entry a job holds (its Ref) and places the
-- job again: a retry, a recovered lease, an orphan, a job read too early.
local function stream_requeue(stream, delayed, seq, key, id, run_at, now)
  local f = rec_get(key, 'Ref', 'RunAt', 'Payload', 'RetryCount', 'Name')
  stream_drop(stream, f[1])
  local ref = stream_place(stream, delayed, seq, id, run_at or f[2], now, nil, f[3], view_extra(f[4], f[5]))
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
-- is dropped. fields, when given, holds each entry's field list as the
-- claim's own script read it: an entry with the claim's view (stream_xadd)
-- is then taken without reading its record (it cannot be stale); without
-- it (entries a blocking read returned before this call, when anything may
-- have happened to them) each record is read. Record keys are derived
-- (job_prefix). Returns the claimed jobs
-- as view_out lays them out, oldest RunAt first (stream order among equal
-- RunAt: a retry appended later may be due earlier), and the earliest RunAt
-- appended for not being due, or ''.
local function stream_take(active, stream, prefix, entries, now, deadline, worker, token_base, take, fields)
  local taken, leases, next_at, n, sorted = {}, {}, '', 0, true
  for i = 1, #entries, 2 do
    local entry, id = entries[i], entries[i + 1]
    local key = prefix .. id
    local e = fields and fields[(i + 1) / 2]
    local ok, run_at, payload, extra
    if e and e[3] == 'at' then
      -- read in this script: not stale, and it carries its view
      ok, run_at = true, e[4]
      for k = 5, #e, 2 do
        if e[k] == 'p' then payload = e[k + 1] elseif e[k] == 'x' then extra = e[k + 1] end
      end
    else
      local f = rec_get(key, 'Status', 'Ref', 'RunAt', 'Payload', 'RetryCount', 'Name')
      ok, run_at, payload, extra = f[2] == entry and is_waiting(f[1]), f[3], f[4], view_extra(f[5], f[6])
    end
    local early = run_at and not ms_le(run_at, now)
    if not ok then
      stream_drop(stream, entry)
    elseif early or n >= take then
      stream_requeue(stream, nil, nil, key, id, run_at, now)
      if early and (next_at == '' or not ms_le(next_at, run_at)) then next_at = run_at end
    else
      n = n + 1
      local token = token_base .. '.' .. num_text(n) .. '@' .. entry
      leases[#leases + 1] = deadline
      leases[#leases + 1] = lease_member(id, token)
      claim_record(key, token, worker, now, deadline)
      taken[n] = { id, token, payload or false, run_at or '0', n, extra or false }
      if n > 1 and not ms_le(taken[n - 1][4], taken[n][4]) then sorted = false end
    end
  end
  if #leases > 0 then zadd_desc(active, leases) end
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
  members = members or redis.call('ZRANGE', delayed, '-inf', now, 'BYSCORE', 'LIMIT', 0, max)
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
