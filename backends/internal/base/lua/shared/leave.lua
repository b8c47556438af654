-- leave: a claimer that registered as a waiter (lib.lua's hand-off) and
-- stops waiting without another claim call (its wait or its context ended)
-- leaves the waiters, and takes what an enqueue handed it meanwhile.
--
-- KEYS: [1] the waiters ZSET (the inbox is derived from it and the member).
-- ARGV: the registration's member.
-- Returns: the handed item (base's decodeHandoff reads it), or false.
-- Complexity: O(log W).
return handoff_leave(KEYS[1], ARGV[1])
