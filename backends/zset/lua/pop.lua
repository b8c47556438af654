-- pop: claim step 1 (lib.lua's pop_leases): up to max due jobs leave the
-- queue and are leased in one atomic step, so concurrent claimers never race
-- for the head job (the seed read ids outside Lua, then fought over them).
-- KEYS[1] queue ZSET, KEYS[2] active index, KEYS[3] the wake-up marker
-- when claims block. ARGV: now, max, lease deadline, token base.
-- Returns {id, token pairs, the head's RunAt ms or ''} .
local out = pop_leases(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4])
return { out, head_after_pop(KEYS[1], KEYS[3] or false, ARGV[1]) }
