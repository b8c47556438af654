-- stream_recover: Recover for the stream backends: each job taken back is
-- placed anew, due now (lib_stream.lua's stream_move), or dead-lettered.
--
-- KEYS: active index, dead ZSET, then the place keys (the stream, and for dual
--   the delayed ZSET and its sequence), then one record per lease member.
-- ARGV: now, retention ms, number of place keys (1 or 3), the lease members
--   read as expired.
-- Returns: {requeued ids, dead-lettered ids} (lib.lua's recover_leases).
-- Complexity: O(M log A) for M members.
local np = tonumber(ARGV[3])
local stream, delayed, seq = KEYS[3], nil, nil
if np == 3 then delayed, seq = KEYS[4], KEYS[5] end
local moved = false
local out = recover_leases(KEYS[1], KEYS[2], 3 + np, 4, ARGV[1], ARGV[2],
  function(key, id, run_at)
    stream_move(stream, delayed, seq, key, id, run_at, ARGV[1])
    moved = true
  end)
if moved then stream_wake(stream, ARGV[1]) end -- once a call (lib_stream.lua)
return out
