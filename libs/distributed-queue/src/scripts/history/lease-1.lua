--[[
  Takes or renews the history writer's lease on one stream: one writer at a time copies a stream.
  KEYS[1] the lease key
  ARGV[1] this writer's id  ARGV[2] lease ms
  Returns: 1 held by this writer (taken or renewed), 0 held by another
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
