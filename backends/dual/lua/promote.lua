-- promote: the mover. Moves due jobs from the delayed ZSET into the stream,
-- each exactly once: ZREM picks the one winner among concurrent movers, and
-- the XADD happens in the same atomic call, so no crash can fall between
-- the two (the seed's mover did them in separate commands).
-- KEYS[1] delayed ZSET, KEYS[2] stream, KEYS[2+i] record of the i-th member.
-- ARGV: now, then the members a plain read found due, oldest first.
-- Returns how many it moved.
local delayed, stream, now = KEYS[1], KEYS[2], tonumber(ARGV[1])
local moved = 0
for i = 2, #ARGV do
  local member, key = ARGV[i], KEYS[1 + i]
  local score = redis.call('ZSCORE', delayed, member)
  if score and tonumber(score) <= now and redis.call('ZREM', delayed, member) == 1
      and rec_get(key, 'Ref')[1] == member then
    rec_set(key, 'Ref', redis.call('XADD', stream, '*', 'id', seq_member_id(member)))
    moved = moved + 1
  end
end
return moved
