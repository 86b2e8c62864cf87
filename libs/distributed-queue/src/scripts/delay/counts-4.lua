--[[
  Counts a type's tasks by state, each in O(log n) or O(1): ready and delayed split the waiting set at Redis's
  now; running, dead and recently done are the sizes of their keys.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] dead  KEYS[4] done
  Returns: { now, delayed, ready, running, dead, done }
]]
--- @include "includes/now-ms"

local now = nowMs()
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', now)
local delayed = redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
return { now, delayed, ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('LLEN', KEYS[4]) }
