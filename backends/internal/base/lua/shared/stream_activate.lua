-- stream_activate: claim step 2 of the stream backends, after an XREADGROUP
-- (which cannot know, and so cannot declare, the records of what it reads).
-- KEYS[1] active index, KEYS[2] stream, KEYS[2+i] record of the i-th entry.
-- ARGV: now, lease deadline, worker, token base, take, then entry id, job
-- id per entry. Up to take due jobs are put under a lease; each one's entry
-- stays pending, so the pending entries list and the active index hold it
-- together until Complete, Fail or Recover. A job read before its RunAt is
-- never started: its entry is dropped and a new one appended (the cost of
-- having no place for delayed jobs); so is a due job past take (read by a
-- claim that scanned ahead in a larger batch). An entry whose record is
-- gone, no longer waiting, or points at another entry (Ref) is dropped.
-- Returns {records, the stream's last entry id before any append (a claim
-- that has read up to it has looked at every waiting entry), earliest RunAt
-- appended for not being due, or ''}.
local active, stream, now, deadline, worker, base = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local take = tonumber(ARGV[5])
local tail = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
local out, next_at = {}, ''
for i = 6, #ARGV, 2 do
  local n = (i - 4) / 2
  local entry, id, key = ARGV[i], ARGV[i + 1], KEYS[2 + n]
  local f = rec_get(key, 'Status', 'Ref', 'RunAt')
  local early = f[3] and tonumber(f[3]) > tonumber(now)
  if f[2] ~= entry or not is_waiting(f[1]) then
    stream_drop(stream, entry)
  elseif early or #out >= take then
    stream_requeue(stream, nil, nil, key, id, f[3], now)
    if early and (next_at == '' or tonumber(f[3]) < tonumber(next_at)) then next_at = f[3] end
  else
    local token = base .. '.' .. n
    lease_grant(active, id, token, deadline)
    out[#out + 1] = activate(active, key, id, token, worker, now, deadline)
  end
end
return { out, tail and tail[1] or '', next_at }
