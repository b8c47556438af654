-- seed001_claim: SEED VARIANT (seed 001's ClaimSingleJob, lines 294-361),
-- not the corrected claim. The caller read the queue's head outside Lua
-- (ZRANGEBYSCORE ... LIMIT, as AsyncEndpoints' ClaimNextJobForWorker does),
-- so every claimer reads the same head and all but one lose the race here.
-- The seed's checks, in its order: WorkerId set -> ALREADY_ASSIGNED (line
-- 317), Status not Queued or Scheduled -> WRONG_STATUS (321), then its
-- retry-delay check (326-331), which parses the RetryDelayUntil the seed
-- writes (an ISO 8601 date, kept in SeedRetryDelayUntil) with tonumber(),
-- gets nil and never fires. The ZREM's reply decides the race among
-- claimers that passed the checks at once. The job taken is leased as the
-- corrected store does.
--
-- With ARGV[6] = 'reply' (variant seed001-reply) it also returns the
-- seed's own reply (lines 355-360): the seventeen values in the seed's
-- order, currentWorkerId (empty: the check above refused any other) at
-- index 12 between RetryDelayUntil and CreatedAt, where the seed's parser
-- (lines 386-420) reads CreatedAt. Dates are the record's milliseconds
-- where the seed writes ISO 8601 (the misalignment does not depend on it);
-- RetryCount and MaxRetries read 0 where the record leaves them out, as the
-- seed's HSET of every field would store them.
--
-- KEYS: [1] queue ZSET, [2] active index.
-- ARGV: member read, now, lease deadline, token, worker, reply mode ('' or
--   'reply').
-- Returns: {id, token, record}, with 'reply' {id, token, record, seed reply};
--   or an ALREADY_ASSIGNED / WRONG_STATUS / RETRY_DELAY error.
-- Complexity: O(log N + log A).
local queue, active, member, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local id = seq_member_id(member)
local key = job_prefix(queue) .. id
local f = rec_get(key, 'Status', 'SeedRetryDelayUntil', 'Lease')
local _, _, _, worker = lease_parts(f[3]) -- the seed's WorkerId
if worker and worker ~= '' then return redis.error_reply('ALREADY_ASSIGNED ' .. id) end
if not is_waiting(f[1]) then return redis.error_reply('WRONG_STATUS ' .. id) end
local retry_until_text = f[2]
if retry_until_text and retry_until_text ~= '' then
  local retry_until = tonumber(retry_until_text)
  if retry_until and retry_until > tonumber(now) then
    return redis.error_reply('RETRY_DELAY ' .. id)
  end
end
if redis.call('ZREM', queue, member) == 0 then return redis.error_reply('ALREADY_ASSIGNED ' .. id) end
local token = ARGV[4]
lease_grant(active, id, token, ARGV[3])
local rec = rec_snapshot(key)
claim_record(key, token, ARGV[5], now, ARGV[3])
if ARGV[6] ~= 'reply' then return { id, token, rec } end
local g = rec_get(key, 'Name', 'Payload', 'RetryCount', 'MaxRetries', 'CreatedAt', 'RunAt', 'CompletedAt')
local created = g[5] or g[6]
local reply = { id, g[1] or '', ST_INPROGRESS, '', '', '', g[2] or '', '', '', g[3] or '0', g[4] or '0',
  retry_until_text or '', worker or '', created, now, g[7] or '', now }
return { id, token, rec, reply }
