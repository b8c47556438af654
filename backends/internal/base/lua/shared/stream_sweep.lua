-- stream_sweep: the orphan sweep's decision. An orphan is a pending entry
-- whose job was read by a claimer that never ran stream_activate (it
-- crashed, or its reply was lost): no lease covers it and only this sweep
-- brings it back.
--
-- KEYS: [1] stream, [1+i] record of the i-th entry.
-- ARGV: entry id, job id, confirm per entry; confirm is '1' when the store
--   already saw this entry unleased at least the grace period ago.
-- Returns: a letter per entry: 'l' leased (the active index covers it), 'w'
--   waiting and not yet confirmed, 'r' a confirmed orphan, appended anew (its
--   RetryCount unchanged: it never started), 'd' a stale entry,
--   acknowledged. An orphan's entry is acknowledged too: it is read.
-- Complexity: O(n) for n entries.
local stream = KEYS[1]
local out = {}
for i = 1, #ARGV, 3 do
  local n = (i + 2) / 3
  local entry, id, key = ARGV[i], ARGV[i + 1], KEYS[1 + n]
  local f = rec_get(key, 'Status', 'Ref')
  local verdict = 'd'
  if f[2] ~= entry then
    redis.call('XACK', stream, STREAM_GROUP, entry)
  elseif f[1] == ST_INPROGRESS then
    verdict = 'l'
  elseif is_waiting(f[1]) and ARGV[i + 2] == '1' then
    redis.call('XACK', stream, STREAM_GROUP, entry)
    stream_move(stream, nil, nil, key, id)
    stream_wake(stream)
    verdict = 'r'
  elseif is_waiting(f[1]) then
    verdict = 'w'
  else
    redis.call('XACK', stream, STREAM_GROUP, entry)
  end
  out[n] = verdict
end
return out
