-- complete_many: CompleteMany in one call (lib.lua's complete_many).
-- KEYS[1] active index, KEYS[2] completed counter, KEYS[2+i] record of the
-- i-th lease. ARGV: now, retention ms, then id, token, result per lease.
-- Returns one integer per lease: 1 completed, 0 lease lost.
return complete_many(KEYS[1], KEYS[2], 3, 3, ARGV[1], ARGV[2])
