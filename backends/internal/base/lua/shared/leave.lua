-- leave: a claimer that registered as a waiter (lib.lua's hand-off) and
-- stops waiting without another claim call (its wait or its context ended)
-- leaves the waiters, and takes what an enqueue handed it meanwhile.
--
-- It also removes the registrations that expired (claimers that died
-- registered: lib.lua's handoff_sweep).
--
-- KEYS: [1] the waiters ZSET (the inbox is derived from it and the member).
-- ARGV: the registration's member, now.
-- Returns: the handed item (base's decodeHandoff reads it), or false.
-- Complexity: O(log W + E) for E expired registrations.
local item = handoff_leave(KEYS[1], ARGV[1])
handoff_sweep(KEYS[1], ARGV[2])
return item
