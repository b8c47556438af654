-- seed000_place: SEED VARIANT (seed 000, approach 3, CreateJob lines
-- 478-491), not the corrected enqueue. The corrected enqueue has stored the
-- record and put the job in its bucket under its own field; this script
-- puts it the seed's way instead: three fixed fields, jobId, delayUntil and
-- addedAt (seconds), written with HSET into the bucket shared by every job
-- of the window, so each job overwrites the one before it and a bucket
-- keeps only its last job. The bucket's index score is set (plain ZADD, as
-- SortedSetAddAsync does) to this job's RunAt, overwriting the earlier
-- job's. A job overwritten leaves the bucketed counter (it is in no queue
-- now; the seed keeps no counter, the variant's Stats does).
--
-- KEYS: [1] bucket, [2] bucket index, [3] bucketed-job counter, [4] the
--   job's record.
-- ARGV: [1] RunAt ms, [2] now ms.
-- Returns: 1 when it overwrote another job's jobId field, else 0.
-- Complexity: O(1) for the bucket, O(log B) for the index of B buckets.
local bucket, index, rec = KEYS[1], KEYS[2], KEYS[4]
local ref = rec_get(rec, 'Ref')[1]
-- Only a job the enqueue put in this bucket: one it found due by its own
-- clock reading went to ready, and stays there.
if not ref or ref:sub(1, #bucket + 1) ~= bucket .. '|' then return 0 end
local member = ref:sub(#bucket + 2)
redis.call('HDEL', bucket, member)
local before = redis.call('HGET', bucket, 'jobId')
redis.call('HSET', bucket, 'jobId', member, 'delayUntil', tostring(math.floor(tonumber(ARGV[1]) / 1000)),
  'addedAt', tostring(math.floor(tonumber(ARGV[2]) / 1000)))
redis.call('ZADD', index, ARGV[1], bucket)
if before and before ~= member then
  redis.call('DECR', KEYS[3])
  return 1
end
return 0
