-- recover: KEYS active, dead, queue, then one record per member.
-- ARGV now, retention ms, 1 (place keys), lease members.
return recover_leases(KEYS[1], KEYS[2], 4, 4, ARGV[1], ARGV[2],
  function(key, id, run_at) redis.call('ZADD', KEYS[3], run_at, rec_get(key, 'Ref')[1]) end)
