--[[
  Counts a type's tasks by state: ready and delayed split the waiting set at Redis's now (one ZCOUNT per
  chunk holding ready tasks, see waiting-set.lua); running, dead and recently done are the sizes of their keys.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] dead  KEYS[4] done
  Returns: { now, delayed, ready, running, dead, done }
]]
--- @include "includes/now-ms"
--- @include "includes/waiting-set"

local now = nowMs()
local total, ready = wsCounts(KEYS[1], now)
local delayed = math.max(0, total - ready)
return { now, delayed, ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('LLEN', KEYS[4]) }
