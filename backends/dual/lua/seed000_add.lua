-- seed000_add: SEED VARIANT (seed 000): the second of the seed mover's
-- separate steps for one job, after its ZREM (whose result the seed does
-- not look at): XADD the job to the stream, and point the record's Ref at
-- the new entry (so Fail and Recover find it).
-- KEYS[1] stream, KEYS[2] record. ARGV: job id.
-- Returns the new entry id.
local entry = redis.call('XADD', KEYS[1], '*', 'id', ARGV[1])
rec_set(KEYS[2], 'Ref', entry)
return entry
