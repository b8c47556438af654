-- seed004_claim: SEED VARIANT (seed 004), not the corrected claim. Seed
-- 004's pop, as its Lua script does it: ZRANGEBYSCORE the due ids (LIMIT 0
-- limit, the seed's batch of 20), then ZREM them, before any work. Each job
-- popped gets the seed's processing marker (Status InProgress, WorkerId,
-- StartedAt, the claim's token and claim time + lease, written on the
-- record) but no lease in the active index: nothing ever takes it back, so a
-- worker that crashes between this pop and its Complete loses the job (the
-- flaw the seed itself warns of).
-- KEYS[1] queue ZSET, KEYS[2] the processing ZSET (id -> claim time +
-- lease: the seed's processing markers, counted by Stats; nothing reads
-- it to recover).
-- ARGV: now, limit, claim time + lease (kept for the read-back), token base,
-- worker.
-- Returns token, record pairs (records as read before this call's writes).
local queue, now, limit = KEYS[1], ARGV[1], tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', queue, '-inf', now, 'LIMIT', 0, limit)
for i = 1, #ids do redis.call('ZREM', queue, ids[i]) end
local prefix = job_prefix(queue)
local out = {}
for i, member in ipairs(ids) do
  local key = prefix .. seq_member_id(member)
  local rec, st = rec_snapshot(key)
  if rec and is_waiting(st) then
    local token = ARGV[4] .. '.' .. i
    claim_record(key, token, ARGV[5], now, ARGV[3])
    redis.call('ZADD', KEYS[2], ARGV[3], seq_member_id(member))
    out[#out + 1] = token
    out[#out + 1] = rec
  end
end
return out
