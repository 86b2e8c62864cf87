--[[
  The scheduler evicts machines whose last heartbeat is older than the offline threshold and returns the
  live ones with the current assignment.
  KEYS[1] machines  KEYS[2] assignment
  ARGV[1] offline ms  ARGV[2] lua log (0/1)
  Returns: { now, { live machine ids (oldest heartbeat first) }, { partition, machine, ... } }
]]
--- @include "includes/now-ms"
--- @include "includes/route-log"

local now = nowMs()
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  routeLog(ARGV[2], 'route-evict', table.concat(gone, ','))
end
return { now, redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('HGETALL', KEYS[2]) }
