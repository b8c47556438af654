-- cancel: KEYS record, queue. ARGV id, now, retention ms.
local ref, err = cancel_job(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if not ref then return err end
redis.call('ZREM', KEYS[2], ref)
return 1
