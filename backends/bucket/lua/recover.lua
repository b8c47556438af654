-- recover: Recover. A recovered job is due at once: it goes straight back
-- into ready and wakes a claimer (once per call).
--
-- KEYS: active, dead, ready, [wake-up marker], then one record per member.
-- ARGV: now, retention ms, number of place keys (1, or 2 with the marker when
--   claims block), lease members.
-- Returns: {requeued ids, dead-lettered ids} (lib.lua's recover_leases).
-- Complexity: O(M (log A + log R)) for M members.
local places = tonumber(ARGV[3])
local marker = places == 2 and KEYS[4]
return recover_leases(KEYS[1], KEYS[2], 3 + places, 4, ARGV[1], ARGV[2],
  function(key, id, run_at)
    local member = seq_ref_of(key, id, KEYS[3])
    redis.call('ZADD', KEYS[3], run_at, member)
    rec_set(key, 'Ref', KEYS[3] .. '|' .. member)
    wake(marker)
    marker = false
  end)
