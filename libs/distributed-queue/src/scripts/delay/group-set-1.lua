--[[
  Sets one setting of a group of a delay-queue type (see groups.lua): paused, its concurrency or its weight,
  and puts the group in or out of the rotation as the setting now allows; wakes the workers when it entered.
  KEYS[1] waiting
  ARGV[1] group  ARGV[2] field: 'p' paused, 'c' concurrency, 'w' weight, 'r' rate limit  ARGV[3] value ('' removes it)
  ARGV[4] events channel
  Returns: 1 when the group entered the rotation, else 0
]]
--- @include "includes/groups"

local ws, g, field, value = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if field == 'r' then
  -- a changed rate limit starts afresh; a group it held out may run at once
  redis.call('HDEL', ws .. ':gtat', g)
  redis.call('ZREM', ws .. ':gt', g)
end
if value == '' then
  redis.call('HDEL', ws .. ':gset', field .. ':' .. g)
else
  redis.call('HSET', ws .. ':gset', field .. ':' .. g, value)
end
if redis.call('EXISTS', groupKey(ws, g)) == 0 then return 0 end
if redis.call('ZSCORE', ws .. ':gr', g) and not groupMayRun(ws, g) then
  redis.call('ZREM', ws .. ':gr', g)
  redis.call('HSET', ws .. ':gx', g, '1')
  return 0
end
if groupEnter(ws, g) then
  redis.call('PUBLISH', ARGV[4], 'w:0')
  return 1
end
return 0
