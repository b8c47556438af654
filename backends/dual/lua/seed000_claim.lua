-- seed000_claim: SEED VARIANT (seed 000's ClaimNextJobForWorker, lines
-- 84-199), not the corrected claim, for each entry read:
--   * no record: the seed returns no job and leaves the entry pending
--     (lines 107-111);
--   * Scheduled with RetryDelayUntil still ahead (a tracking entry, or a job
--     the mover promoted early): back into the delayed ZSET at its whole-
--     second score and acknowledged (lines 115-125), counted as
--     tracking_bounced or early_promotions;
--   * the seed's claim script (lines 128-155): WorkerId set ->
--     ALREADY_ASSIGNED, Status not Queued, Scheduled or InProgress ->
--     WRONG_STATUS; the seed then returns no job and never acknowledges the
--     entry, so it stays in the PEL (counted as refused_claims);
--   * otherwise InProgress under this worker and acknowledged AT CLAIM
--     (line 151).
-- Departures: one call handles up to the read count where the seed reads
-- one entry per call; the job is also leased in the active index and its
-- entry deleted where the seed only acknowledges it (recovery, fencing and
-- Stats stay the corrected ones: this variant shows the mover's flaws).
--
-- KEYS: [1] active index, [2] stream, [3] delayed ZSET, [4] audit HASH.
-- ARGV: now, lease deadline, worker, token base, read count, consumer.
-- Returns: id, token, record triples (records as read before this call's writes).
-- Complexity: O(n (log A + log D)) for n entries read.
local function seed000_score(ms) return string.format('%d', math.floor(ms / 1000) * 1000) end -- whole seconds, x 1000
local active, stream, delayed, audit = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = tonumber(ARGV[1])
local prefix = job_prefix(stream)
local read = redis.call('XREADGROUP', 'GROUP', STREAM_GROUP, ARGV[6], 'COUNT', ARGV[5], 'STREAMS', stream, '>')
local out, tracking, early, refused = {}, 0, 0, 0
for n, e in ipairs(read and read[1][2] or {}) do
  local entry, fields = e[1], e[2]
  local id = fields[2]
  local key = prefix .. id
  local rec, st = rec_snapshot(key)
  local f = rec and rec_get(key, 'RetryDelayUntil', 'Lease') or {}
  f[2] = select(4, lease_parts(f[2])) -- the seed's WorkerId
  local delay_until = tonumber(f[1])
  if not rec then
    refused = refused + 1
  elseif st == ST_SCHEDULED and delay_until and delay_until > now then
    redis.call('ZADD', delayed, seed000_score(delay_until), id)
    rec_set(key, 'Ref', id)
    stream_drop(stream, entry)
    if fields[4] == 'delayed' then tracking = tracking + 1 else early = early + 1 end
  elseif (f[2] and f[2] ~= '') or not (is_waiting(st) or st == ST_INPROGRESS) then
    refused = refused + 1
  else
    local token = ARGV[4] .. '.' .. n .. '@' .. entry
    lease_grant(active, id, token, ARGV[2])
    claim_record(key, token, ARGV[3], ARGV[1], ARGV[2])
    rec_set(key, 'Ref', entry)
    stream_drop(stream, entry)
    out[#out + 1] = id
    out[#out + 1] = token
    out[#out + 1] = rec
  end
end
if tracking > 0 then redis.call('HINCRBY', audit, 'tracking_bounced', tracking) end
if early > 0 then redis.call('HINCRBY', audit, 'early_promotions', early) end
if refused > 0 then redis.call('HINCRBY', audit, 'refused_claims', refused) end
return out
