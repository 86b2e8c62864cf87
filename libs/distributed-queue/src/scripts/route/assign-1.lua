--[[
  The scheduler moves a partition towards its desired owner. A free partition, one whose owner is gone
  (evicted), idle (lease expired) or slow to hand over, moves at once with a new epoch; a live owner is asked
  to hand over (state 'revoking'): it finishes its in-flight batch, then releases (route-release).
  KEYS[1] own
  ARGV[1] desired owner  ARGV[2] current owner alive (0/1)  ARGV[3] lease ms  ARGV[4] hand-over timeout ms
  ARGV[5] events channel  ARGV[6] partition number  ARGV[7] lua log (0/1)
  Returns: 'kept' | 'moved' | 'revoking'
]]
--- @include "includes/fmt"
--- @include "includes/now-ms"
--- @include "includes/route-log"

local own, desired = KEYS[1], ARGV[1]
local r = redis.call('HMGET', own, 'owner', 'state', 'next', 'lease', 'revokeAt')
local now = nowMs()
if r[1] == desired then
  if r[2] == 'revoking' then redis.call('HSET', own, 'state', 'active', 'next', '') end
  return 'kept'
end
local free = (not r[1]) or r[1] == '' or ARGV[2] == '0' or tonumber(r[4] or 0) < now
local stuck = r[2] == 'revoking' and r[3] == desired and tonumber(r[5] or 0) + tonumber(ARGV[4]) < now
if free or stuck then
  redis.call('HINCRBY', own, 'epoch', 1)
  redis.call('HSET', own, 'owner', desired, 'state', 'active', 'next', '', 'lease', fmt(now + tonumber(ARGV[3])))
  redis.call('PUBLISH', ARGV[5], 'o:' .. ARGV[6])
  routeLog(ARGV[7], 'route-assign moved', ARGV[6], r[1] or '-', '->', desired)
  return 'moved'
end
if r[2] ~= 'revoking' or r[3] ~= desired then
  redis.call('HSET', own, 'state', 'revoking', 'next', desired, 'revokeAt', now)
  redis.call('PUBLISH', ARGV[5], 'o:' .. ARGV[6])
  routeLog(ARGV[7], 'route-assign revoking', ARGV[6], r[1], '->', desired)
end
return 'revoking'
