--[[
  The scheduler moves a partition towards its desired owner. A free partition, or one whose owner is gone
  (evicted) or idle (lease expired), moves at once with a new epoch. A live owner with a fresh lease is never
  moved: it is asked to hand over (state 'revoking'), starts no further task, and once the tasks it runs
  ended and were acknowledged it releases the partition (route-release) with the rest of its batch left in
  flight for the next owner. There is deliberately no timeout on that hand-over: a forced move could run a
  key on two machines at once.
  KEYS[1] own
  ARGV[1] desired owner  ARGV[2] current owner alive (0/1)  ARGV[3] lease ms
  ARGV[4] events channel  ARGV[5] partition number  ARGV[6] lua log (0/1)
  Returns: OUTCOME.KEPT, MOVED or REVOKING
]]
--- @include "includes/outcome"
--- @include "includes/fmt"
--- @include "includes/now-ms"
--- @include "includes/route-log"

local own, desired = KEYS[1], ARGV[1]
local r = redis.call('HMGET', own, 'owner', 'state', 'next', 'lease')
local now = nowMs()
if r[1] == desired then
  if r[2] == 'revoking' then redis.call('HSET', own, 'state', 'active', 'next', '') end
  return OUTCOME.KEPT
end
if (not r[1]) or r[1] == '' or ARGV[2] == '0' or tonumber(r[4] or 0) < now then
  redis.call('HINCRBY', own, 'epoch', 1)
  redis.call('HSET', own, 'owner', desired, 'state', 'active', 'next', '', 'lease', fmt(now + tonumber(ARGV[3])))
  redis.call('PUBLISH', ARGV[4], 'o:' .. ARGV[5])
  routeLog(ARGV[6], 'route-assign moved', ARGV[5], r[1] or '-', '->', desired)
  return OUTCOME.MOVED
end
if r[2] ~= 'revoking' or r[3] ~= desired then
  redis.call('HSET', own, 'state', 'revoking', 'next', desired)
  redis.call('PUBLISH', ARGV[4], 'o:' .. ARGV[5])
  routeLog(ARGV[6], 'route-assign revoking', ARGV[5], r[1], '->', desired)
end
return OUTCOME.REVOKING
