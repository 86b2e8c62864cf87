--[[
  A machine's heartbeat (seed's d2): records it as alive and returns the partitions assigned to it.
  KEYS[1] machines (ZSET id -> last heartbeat ms)  KEYS[2] assignment (HASH partition -> machine id)
  ARGV[1] machine id
  Returns: { now, partition numbers assigned to the machine... }
]]
--- @include "includes/now-ms"

local now = nowMs()
redis.call('ZADD', KEYS[1], now, ARGV[1])
local out = { now }
local assign = redis.call('HGETALL', KEYS[2])
for i = 1, #assign, 2 do
  if assign[i + 1] == ARGV[1] then out[#out + 1] = tonumber(assign[i]) end
end
return out
