-- recover: Recover (lib.lua's recover_leases): a requeued job goes back into the queue, due now.
--
-- KEYS: active, dead, queue, [wake-up marker], then one record per member.
-- ARGV: now, retention ms, number of place keys (1 or 2), members.
-- Returns: {requeued ids, dead-lettered ids}.
-- Complexity: O(M (log A + log N)) for M members.
local places = tonumber(ARGV[3])
local marker = places == 2 and KEYS[4]
return recover_leases(KEYS[1], KEYS[2], 3 + places, 4, ARGV[1], ARGV[2],
  function(key, id, run_at)
    local ref, new = seq_ref_of(key, id, KEYS[3])
    if new then rec_set(key, 'Ref', ref) end
    zadd_wake(KEYS[3], marker, run_at, ref, ARGV[1])
  end)
