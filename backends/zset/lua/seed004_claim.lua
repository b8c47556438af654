-- seed004_claim: SEED VARIANT (seed 004's pop, lines 134-147), not the
-- corrected claim: ZRANGEBYSCORE the due ids (LIMIT 0 limit, the seed's
-- batch of 20), then ZREM them, before any work. Each record popped is
-- marked InProgress (what our ledger's read-back reads; the seed's job hash
-- has no status) but gets no lease in the active index: nothing ever takes
-- it back, so a worker that crashes between this pop and its Complete loses
-- the job (the flaw the seed itself warns of). The seed's processing marker
-- is written after this call, by the caller (seed004.go).
--
-- KEYS: [1] queue ZSET.
-- ARGV: now, limit, claim time + lease (kept for the read-back), token base,
--   worker.
-- Returns: id, token, record triples (records as read before this call's writes).
-- Complexity: O(log N + k) for k popped.
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
    out[#out + 1] = seq_member_id(member)
    out[#out + 1] = token
    out[#out + 1] = rec
  end
end
return out
