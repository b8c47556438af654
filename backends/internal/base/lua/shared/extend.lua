-- extend: a heartbeat (lib.lua's extend_lease).
--
-- KEYS: active index, record.
-- ARGV: id, token, now, deadline.
-- Returns: the new deadline, or an AE_LEASE_LOST error.
-- Complexity: O(log A).
return extend_lease(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
