-- activate: claim step 2 for backends whose pop already granted the leases
-- (pop and activate are two calls because a pop cannot know, and so cannot
-- declare, the record keys of the jobs it will take).
-- KEYS[1] active index; KEYS[1+i] record of the i-th job.
-- ARGV: now, deadline, worker, then id, token per job.
-- Returns the records it activated.
local active, now, deadline, worker = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local out = {}
for i = 4, #ARGV, 2 do
  local rec = activate(active, KEYS[1 + (i - 2) / 2], ARGV[i], ARGV[i + 1], worker, now, deadline)
  if rec then out[#out + 1] = rec end
end
return out
