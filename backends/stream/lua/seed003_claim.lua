-- seed003_claim: SEED VARIANT (seeds 003 and 000), not the corrected
-- claim. XREADGROUP as the corrected claim does, but each due job read is
-- acknowledged (XACK) at once, as the seeds' claim scripts do, and gets no
-- lease in the active index: its entry leaves the pending entries list, the
-- one thing the seeds' recovery (XPENDING / XCLAIM) would find it by, so a
-- worker that crashes after this claim loses the job. A job read before its
-- RunAt is appended again, as the corrected claim does. Like the corrected
-- claim, it reads on past jobs not yet due, up to the stream's tail as it
-- was before its own appends. An entry it refuses (its job not waiting, or
-- the record's Ref another entry: a job created twice, seed003_readd) it
-- leaves unacknowledged, as the seed's claim does: in the PEL for good.
--
-- KEYS: [1] stream, [2] processing ZSET (id -> claim time + lease; counted by
--   Stats, read by no recovery).
-- ARGV: now, claim time + lease (kept in the record), worker, token base, read
--   count, consumer.
-- Returns: id, token, record triples (records as read before this call's writes); a
--   token ends in "@<entry id>".
-- Complexity: O(n + k log P) for n entries read, k taken.
local stream, now = KEYS[1], ARGV[1]
local prefix = job_prefix(stream)
local tail = stream_tail(stream)
local out, n, reached = {}, 0, tail == ''
while #out == 0 and not reached do
  local read = redis.call('XREADGROUP', 'GROUP', STREAM_GROUP, ARGV[6], 'COUNT', ARGV[5], 'STREAMS', stream, '>')
  if not read or #read[1][2] == 0 then break end
  for _, e in ipairs(read[1][2]) do
    local entry, id = e[1], e[2][2]
    local key = prefix .. id
    local rec, st = rec_snapshot(key)
    local ref, run_at = rec and rec_snap_field(key, rec, 'Ref'), rec and rec_snap_field(key, rec, 'RunAt')
    reached = reached or entry == tail
    if ref ~= entry or not is_waiting(st) then
      -- Refused (seed 003 lines 192-196: ALREADY_ASSIGNED or WRONG_STATUS,
      -- and lines 140-143: no record) and never acknowledged: the entry
      -- stays in the PEL for good, as the seed's does.
    elseif run_at and tonumber(run_at) > tonumber(now) then
      stream_requeue(stream, nil, nil, key, id, run_at, now)
    else
      n = n + 1
      local token = ARGV[4] .. '.' .. n .. '@' .. entry
      redis.call('XACK', stream, STREAM_GROUP, entry)
      claim_record(key, token, ARGV[3], now, ARGV[2])
      redis.call('ZADD', KEYS[2], ARGV[2], id)
      out[#out + 1] = id
      out[#out + 1] = token
      out[#out + 1] = rec
    end
  end
end
return out
