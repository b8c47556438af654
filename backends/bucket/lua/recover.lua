-- recover: KEYS active, dead, ready, then one record per member.
-- ARGV now, retention ms, 1 (place keys), lease members.
-- A recovered job is due at once: it goes straight back into ready.
return recover_leases(KEYS[1], KEYS[2], 4, 4, ARGV[1], ARGV[2],
  function(key, id, run_at)
    local member = rec_get(key, 'Ref')[1]:match('|(.+)$')
    redis.call('ZADD', KEYS[3], run_at, member)
    rec_set(key, 'Ref', KEYS[3] .. '|' .. member)
  end)
