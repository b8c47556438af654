-- stream_complete_many: CompleteMany for the stream backends. The entries
-- of the completed jobs are acknowledged and deleted with one XACK and one
-- XDEL.
--
-- KEYS: [1] active index, [2] completed counter, [3] stream (the records'
--   keys are derived: lib.lua's complete_many).
-- ARGV: now, retention ms, '1' with results or '0' without, then lease
--   member, id (and result) per lease.
-- Returns: one character per lease, '1' completed, '0' lease lost.
-- Complexity: O(k log A) for k leases, plus the records swept.
local entries = {}
local r = complete_many(KEYS[1], KEYS[2], 3, ARGV[1], ARGV[2], function(key, _, member)
  entries[#entries + 1] = stream_lease_entry(key, member)
end)
if #entries > 0 then
  redis.call('XACK', KEYS[3], STREAM_GROUP, unpack(entries))
  redis.call('XDEL', KEYS[3], unpack(entries))
end
return r
