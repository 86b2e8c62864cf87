--[[
  Counts a type's tasks by state: ready and delayed split the waiting set at Redis's now (one ZCOUNT per
  chunk holding ready tasks, see waiting-set.lua: the first COUNT_STEP chunks here, the others by
  count-ready-1.lua, COUNT_STEP a call); running, dead and recently done are the sizes of their keys.
  KEYS[1] waiting  KEYS[2] active  KEYS[3] dead  KEYS[4] done
  Returns: { now, waiting, ready so far, running, dead, done, rank to go on from (-1: all counted) }
]]
--- @include "includes/now-ms"
--- @include "includes/waiting-set"

local COUNT_STEP = 256
local now = nowMs()
local total = tonumber(redis.call('GET', KEYS[1] .. ':n') or '0')
local ready, nextRank = wsCountReady(KEYS[1], now, 0, COUNT_STEP)
return { now, total, ready, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('LLEN', KEYS[4]), nextRank }
