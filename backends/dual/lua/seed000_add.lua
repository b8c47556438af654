-- seed000_add: SEED VARIANT (seed 000), the step of the seed's movers that
-- follows its ZREM, in a command of its own: XADD the job to the stream
-- (approach 1, lines 225-233). With ARGV[2] = '1' it is approach 2's
-- UpdateJob then XADD (lines 429-443): the record becomes Queued with no
-- RetryDelayUntil first. The record's Ref names the new entry.
--
-- KEYS: [1] stream, [2] record.
-- ARGV: job id, update ('1' or '0').
-- Returns: the new entry id.
-- Complexity: O(1).
if ARGV[2] == '1' then rec_set(KEYS[2], 'Status', ST_QUEUED, 'RetryDelayUntil', '') end
local entry = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'status', ST_QUEUED)
rec_set(KEYS[2], 'Ref', entry)
return entry
