-- claim: a whole claim in one call. Up to max due jobs leave the queue and
-- are leased in one atomic step (lib.lua's pop_leases), so concurrent
-- claimers never race for the head job (the seed read ids outside Lua, then
-- fought over them); each is then activated under its lease. The record
-- keys of the jobs taken are derived from the queue key (lib.lua's
-- job_prefix: same hash tag, same slot), since no caller can declare them
-- before the pop. The head is read only when this claim took nothing (the
-- caller blocks until then) or a full batch (due jobs may remain: the wake
-- is passed on).
--
-- KEYS: [1] queue ZSET, [2] active index, [3] the wake-up marker when claims
--   block.
-- ARGV: now, max, lease deadline, token base, worker.
-- Returns: {claimed jobs (lib.lua's view_out: id, token, payload and
--   retries|name each), the head's RunAt ms or ''}.
-- Complexity: O(log N + k log A) for k taken.
local queue, active, marker = KEYS[1], KEYS[2], KEYS[3] or false
local now, max, deadline = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local leased = pop_leases(queue, active, now, max, deadline, ARGV[4])
local out = activate_all(active, job_prefix(queue), leased, ARGV[5], now, deadline)
local head = ''
if #leased == 0 or #leased == 2 * max then head = head_after_pop(queue, marker, now) end
return { out, head }
