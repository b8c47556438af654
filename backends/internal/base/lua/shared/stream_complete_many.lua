-- stream_complete_many: CompleteMany for the stream backends. The entries
-- of the completed jobs are acknowledged and deleted with one XACK and one
-- XDEL.
--
-- KEYS: [1] active index, [2] completed counter, [3] stream, [3+i] record of
--   the i-th lease.
-- ARGV: now, retention ms, then id, token, result per lease.
-- Returns: one character per lease, '1' completed, '0' lease lost.
-- Complexity: O(k log A) for k leases, plus the records swept.
local entries = {}
local r = complete_many(KEYS[1], KEYS[2], 4, 3, ARGV[1], ARGV[2], function(key, _, token)
  entries[#entries + 1] = stream_lease_entry(key, token)
end)
if #entries > 0 then
  redis.call('XACK', KEYS[3], STREAM_GROUP, unpack(entries))
  redis.call('XDEL', KEYS[3], unpack(entries))
end
return r
