-- claim: a whole claim in one call. Up to max due jobs leave the queue and
-- are leased in one atomic step (lib.lua's pop_leases), so concurrent
-- claimers never race for the head job (the seed read ids outside Lua, then
-- fought over them); each is then activated under its lease. The record
-- keys of the jobs taken are derived from the queue key (lib.lua's
-- job_prefix: same hash tag, same slot), since no caller can declare them
-- before the pop. The pop reads one due member more than it takes: when
-- there is one, the wake is passed on without a head read (a ZRANGE
-- WITHSCORES, whose score Redis formats with printf: about 12,500
-- instructions a claim under callgrind, path probe's pop 132k -> 120k).
-- The head is read only when this claim took nothing (the caller blocks
-- until then) or a full batch with no due job after it. When claims block it first ends the caller's registration
-- as a waiter, returning at once what an enqueue handed to it, and
-- registers it anew when it finds nothing (lib.lua's hand-off).
--
-- KEYS: [1] queue ZSET; the active index, the wake-up marker (when claims
--   block), the waiters and inboxes are derived from it (lib.lua's
--   active_key, wake_key).
-- ARGV: now, max, lease deadline, token base, worker; when claims block,
--   then the registration to end, the one to make, and until when (base's
--   Handoff; '' for none).
-- Returns: {claimed jobs (lib.lua's view_out: id, token, payload and
--   retries|name each), the head's RunAt ms or ''}, or {{}, '', handed
--   item} (lib.lua's handoff_give).
-- Complexity: O(log N + k log A) for k taken.
local queue = KEYS[1]
local active, marker = active_key(queue), ARGV[6] ~= nil and wake_key(queue)
local now, max, deadline = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if marker then
  local handed = handoff_leave(queue, ARGV[6])
  if handed then return { {}, '', handed } end
end
local leased, more = pop_leases(queue, active, now, max, deadline, ARGV[4], true)
local out = activate_all(active, job_prefix(queue), leased, ARGV[4], ARGV[5], now, deadline)
local head = ''
if more then
  head = pass_wake(marker, now, now) -- a due job remains: pass the wake on
elseif #leased == 0 or #leased == max then
  head = head_after_pop(queue, marker, now)
end
if marker and #out == 0 then handoff_join(queue, ARGV[7], ARGV[8]) end
return { out, head }
