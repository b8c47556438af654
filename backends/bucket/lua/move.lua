-- move: the mover and the claim in one script. It first promotes due jobs
-- out of the declared buckets into ready, then pops due jobs off ready under
-- fresh leases and activates them, then (on request) names the buckets
-- still holding due jobs. The record keys of the jobs it takes are derived
-- from the ready key (lib.lua's job_prefix: same hash tag, same slot),
-- since no caller can declare them before the pop.
--
-- KEYS: [1] ready, [2] active index, [3] bucket index, [4] bucketed-job
--   counter, then the wake-up marker when claims block, then the buckets Go
--   read from the index as due.
-- ARGV: now, promote max, pop max, lease deadline, token base, report max,
--   number of keys before the buckets (4, or 5 with the marker), '1' when
--   Claim promotes (mover "claim") or '0' (mover "background"), worker;
--   with the marker, then the waiter registration to end, the one to make
--   when this move takes nothing and reports nothing, and until when
--   (lib.lua's hand-off, base's Handoff; '' for none).
-- Returns: {promoted, {claimed jobs (lib.lua's view_out)}, {due bucket keys}, next}, where
--   next is when a claimer may find work next: '' when the head was read and
--   nothing waits for a claimer, nil when it was not read (or claims poll);
--   or {0, {}, {}, '', handed item} when an enqueue had handed the ending
--   registration jobs (lib.lua's handoff_give).
-- Complexity: O(b + p log R + k log A) for declared buckets holding b jobs, p
--   promoted, k popped.
local ready, active, index = KEYS[1], KEYS[2], KEYS[3]
local now, pmax, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local rmax, fixed = tonumber(ARGV[6]), tonumber(ARGV[7])
local marker, claim_moves = fixed == 5 and KEYS[5], ARGV[8] == '1'
if marker then
  local handed = handoff_leave(ready, ARGV[10])
  if handed then return { 0, {}, {}, '', handed } end
end

-- Promote. Each declared bucket is read whole: a job whose RunAt is still
-- ahead stays (the bucket being due does not make its jobs due). The due
-- ones move oldest RunAt first, then by member (enqueue order); HDEL
-- returning 1 is what makes this call the one that moves a job.
local due, low = {}, {}
for b = fixed + 1, #KEYS do
  local kv = redis.call('HGETALL', KEYS[b])
  for i = 1, #kv, 2 do
    local at = tonumber(kv[i + 1])
    if at <= now then
      due[#due + 1] = { at, kv[i], b, kv[i + 1] }
    elseif not low[b] or at < low[b] then
      low[b] = at
    end
  end
end
table.sort(due, function(x, y)
  if x[1] ~= y[1] then return x[1] < y[1] end
  return x[2] < y[2]
end)
local add = {}
for i, d in ipairs(due) do
  if i > pmax then
    if not low[d[3]] or d[1] < low[d[3]] then low[d[3]] = d[1] end
  elseif redis.call('HDEL', KEYS[d[3]], d[2]) == 1 then
    add[#add + 1] = d[4]
    add[#add + 1] = d[2]
  end
end
if #add > 0 then
  zadd_desc(ready, add)
  redis.call('DECRBY', KEYS[4], num_text(#add / 2))
end
-- Each visited bucket is rescored by the earliest RunAt it still holds, or
-- leaves the index when empty.
for b = fixed + 1, #KEYS do
  if low[b] then
    redis.call('ZADD', index, low[b], KEYS[b])
  else
    redis.call('ZREM', index, KEYS[b])
  end
end

-- Pop. The index score of a bucket is never later than its earliest job, so
-- a ready job scored strictly below the lowest score cannot overtake a job
-- still waiting in a bucket: that keeps oldest RunAt first and FIFO among
-- equal RunAt across the two structures.
local upto = ARGV[1]
local lowest = redis.call('ZRANGE', index, '0', '0', 'WITHSCORES')[2]
if lowest and tonumber(lowest) <= now then upto = '(' .. lowest end
local leased = pop_leases(ready, active, upto, max, ARGV[4], ARGV[5])
local out = activate_all(active, job_prefix(ready), leased, ARGV[5], ARGV[9], ARGV[1], ARGV[4])

local report = {}
if rmax > 0 and #leased < max and upto ~= ARGV[1] then
  report = redis.call('ZRANGE', index, '-inf', now, 'BYSCORE', 'LIMIT', '0', ARGV[6])
end

-- Wake-ups (claims that block). A report means Go promotes those buckets
-- and moves again at once: that last move decides. Otherwise the head a
-- claimer waits for is the earlier of ready's head and the lowest bucket
-- score when Claim promotes. When a background mover promotes, a bucket
-- already due is the mover's business (its own move wakes a claimer), and
-- so is every ready job behind it: counting them would spin claimers until
-- the mover comes. A head that is due now passes the wake on (lib.lua).
-- A move that leased some jobs but fewer than asked left nothing due in
-- ready and does not block next: it reads no head.
local next_due = false
if marker and #report == 0 and (#leased == 0 or #leased == max) then
  local h = zsets_head(ready)
  local head = h
  if lowest then
    local l = tonumber(lowest)
    if claim_moves or l > now then
      if not h or l < tonumber(h) then head = lowest end
    elseif h and tonumber(h) >= l then
      head = nil
    end
  end
  next_due = pass_wake(marker, head, ARGV[1])
end
if marker and #out == 0 and #report == 0 then handoff_join(ready, ARGV[11], ARGV[12]) end
return { #add / 2, out, report, next_due }
