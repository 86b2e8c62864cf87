--[[
  Takes or renews the history writer's lease on one stream: one writer at a time copies a stream.
  KEYS[1] the lease key  KEYS[2] the stream's flush request (set by an instance whose flush() waits for the
  holder to copy what is waiting, held-back tasks included)
  ARGV[1] this writer's id  ARGV[2] lease ms
  Returns: 1 held by this writer (taken or renewed), 2 held by this writer and a flush was asked (the request
  is removed: this pass copies everything), 0 held by another
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if redis.call('DEL', KEYS[2]) == 1 then return 2 end
  return 1
end
return 0
