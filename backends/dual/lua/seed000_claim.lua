-- seed000_claim: SEED VARIANT (seed 000), not the corrected claim. Reads
-- entries as the corrected claim does, but with the seed's status check:
-- a job Queued, Scheduled or already InProgress ("for recovery", the seed
-- says) is claimed, and the entry's id is not checked against the record's
-- Ref. So when two movers promoted a job twice (seed000.go), both entries
-- are claimed and the job runs twice. Each claim is leased in the active
-- index (recovery and fencing are the corrected ones); a job read before
-- its RunAt is appended again.
-- KEYS[1] active index, KEYS[2] stream.
-- ARGV: now, lease deadline, worker, token base, read count, consumer.
-- Returns token, record pairs (records as read before this call's writes);
-- a token ends in "@<entry id>".
local active, stream, now = KEYS[1], KEYS[2], ARGV[1]
local prefix = job_prefix(stream)
local read = redis.call('XREADGROUP', 'GROUP', STREAM_GROUP, ARGV[6], 'COUNT', ARGV[5], 'STREAMS', stream, '>')
local out = {}
if not read then return out end
for n, e in ipairs(read[1][2]) do
  local entry, id = e[1], e[2][2]
  local key = prefix .. id
  local rec, st = rec_snapshot(key)
  local run_at = rec and rec_snap_field(key, rec, 'RunAt')
  if not rec or not (is_waiting(st) or st == ST_INPROGRESS) then
    stream_drop(stream, entry)
  elseif run_at and tonumber(run_at) > tonumber(now) then
    stream_drop(stream, entry)
    rec_set(key, 'Ref', redis.call('XADD', stream, '*', 'id', id))
  else
    local token = ARGV[4] .. '.' .. n .. '@' .. entry
    lease_grant(active, id, token, ARGV[2])
    claim_record(key, token, ARGV[3], now, ARGV[2])
    out[#out + 1] = token
    out[#out + 1] = rec
  end
end
return out
